package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox4j.api.Message;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;

/**
 * Two named outboxes in a Spring Boot application on two real PostgreSQL databases, publishing to a
 * real Kafka broker (test-services), configured as Spring Boot's documentation configures a second
 * DataSource: Boot's own {@code spring.datasource.*} for orders, a {@code defaultCandidate=false}
 * bean for billing, each with its own transaction manager. Each outbox enqueues in its own database
 * and its relay publishes what was enqueued there; health has an entry per outbox and one broken
 * outbox leaves the other UP and publishing; a mistake in the configuration ends the start with
 * Boot's report.
 */
@ExtendWith(OutputCaptureExtension.class)
class NamedOutboxesPostgresKafkaTest {
    /** The application: Boot's auto-configuration, a second DataSource, and two services. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({OrderService.class, BillingService.class})
    static class App {
        /** Billing's database, beside the DataSource Boot configures from spring.datasource.*. */
        @Bean(defaultCandidate = false)
        DataSource billingDataSource(Environment env) {
            return DataSourceBuilder.create()
                    .url(env.getRequiredProperty("app.billing.url"))
                    .username(env.getProperty("spring.datasource.username"))
                    .password(env.getProperty("spring.datasource.password"))
                    .build();
        }

        @Bean(defaultCandidate = false)
        PlatformTransactionManager billingTransactionManager(
                @Qualifier("billingDataSource") DataSource billing) {
            return new DataSourceTransactionManager(billing);
        }
    }

    /** Orders: Boot's DataSource and transaction manager, the primary outbox. */
    static class OrderService {
        private final JdbcTemplate jdbc;
        private final TransactionalOutbox outbox;
        private final Environment env;

        OrderService(JdbcTemplate jdbc, TransactionalOutbox outbox, Environment env) {
            this.jdbc = jdbc;
            this.outbox = outbox;
            this.env = env;
        }

        @Transactional
        public void place(String orderId) {
            jdbc.update("INSERT INTO orders (id) VALUES (?)", orderId);
            outbox.enqueue(event(env.getRequiredProperty("app.orders.topic"), orderId, null));
        }

        @Transactional
        public void placeLater(String orderId) {
            outbox.enqueue(
                    event(
                            env.getRequiredProperty("app.orders.topic"),
                            orderId,
                            Instant.now().plus(Duration.ofHours(1))));
        }
    }

    /** Billing: its own DataSource, transaction manager and outbox. */
    static class BillingService {
        private final JdbcTemplate jdbc;
        private final TransactionalOutbox outbox;
        private final Environment env;

        BillingService(
                @Qualifier("billingDataSource") DataSource billing,
                @Qualifier("billing") TransactionalOutbox outbox,
                Environment env) {
            this.jdbc = new JdbcTemplate(billing);
            this.outbox = outbox;
            this.env = env;
        }

        @Transactional("billingTransactionManager")
        public void invoice(String invoiceId) {
            jdbc.update("INSERT INTO invoices (id) VALUES (?)", invoiceId);
            outbox.enqueue(event(env.getRequiredProperty("app.billing.topic"), invoiceId, null));
        }

        @Transactional("billingTransactionManager")
        public void invoiceLater(String invoiceId) {
            outbox.enqueue(
                    event(
                            env.getRequiredProperty("app.billing.topic"),
                            invoiceId,
                            Instant.now().plus(Duration.ofHours(1))));
        }
    }

    static Message event(String topic, String id, Instant notBefore) {
        Message.Builder b =
                Message.builder()
                        .id(id)
                        .topic(topic)
                        .key(id)
                        .module("shop")
                        .contentType("application/json")
                        .payload("{\"id\":\"" + id + "\"}");
        if (notBefore != null) {
            b.notBefore(notBefore);
        }
        return b.build();
    }

    /** Fresh databases and topics for one application. */
    private static final class Setup {
        final String ordersUrl;
        final String billingUrl;
        final String ordersTopic = "orders-" + UUID.randomUUID();
        final String billingTopic = "invoices-" + UUID.randomUUID();

        Setup(String name) {
            PostgresServer pg = PostgresServer.shared();
            ordersUrl = pg.createDatabase("named_" + name + "_orders");
            billingUrl = pg.createDatabase("named_" + name + "_billing");
            KafkaServer kafka = KafkaServer.shared();
            kafka.createTopic(ordersTopic, 1, Map.of());
            kafka.createTopic(billingTopic, 1, Map.of());
        }

        SpringApplicationBuilder app(String... more) {
            PostgresServer pg = PostgresServer.shared();
            String kafka = KafkaServer.shared().bootstrapServers();
            return new SpringApplicationBuilder(App.class)
                    .properties(
                            "spring.main.banner-mode=off",
                            "spring.datasource.url=" + ordersUrl,
                            "spring.datasource.username=" + pg.user(),
                            "spring.datasource.password=" + pg.password(),
                            "app.billing.url=" + billingUrl,
                            "app.orders.topic=" + ordersTopic,
                            "app.billing.topic=" + billingTopic,
                            "outbox4j.health.statistics-cache-ttl=0s",
                            "outbox4j.publisher.kafka.bootstrap-servers=" + kafka,
                            "outbox4j.outboxes.orders.primary=true",
                            "outbox4j.outboxes.orders.store.jdbc.create-schema=true",
                            "outbox4j.outboxes.billing.data-source=billingDataSource",
                            "outbox4j.outboxes.billing.store.jdbc.create-schema=true",
                            "outbox4j.outboxes.billing.publisher.kafka.bootstrap-servers=" + kafka)
                    .properties(more);
        }
    }

    private static void businessTables(ConfigurableApplicationContext app) {
        new JdbcTemplate(app.getBean("dataSource", DataSource.class))
                .execute("CREATE TABLE orders (id varchar(64) PRIMARY KEY)");
        new JdbcTemplate(app.getBean("billingDataSource", DataSource.class))
                .execute("CREATE TABLE invoices (id varchar(64) PRIMARY KEY)");
    }

    @Test
    @DisplayName(
            "two outboxes on two PostgreSQL databases: each enqueues in its own database and Kafka receives exactly each one's messages")
    void eachOutboxPublishesItsOwnMessagesToKafka() {
        Setup setup = new Setup("publish");
        try (ConfigurableApplicationContext app = setup.app().run();
                KafkaConsumer<byte[], byte[]> orders = KafkaReads.consumer(setup.ordersTopic);
                KafkaConsumer<byte[], byte[]> invoices = KafkaReads.consumer(setup.billingTopic)) {
            businessTables(app);
            OrderService orderService = app.getBean(OrderService.class);
            BillingService billingService = app.getBean(BillingService.class);
            Set<String> orderIds = new HashSet<>();
            Set<String> invoiceIds = new HashSet<>();
            for (int i = 0; i < 20; i++) {
                orderService.place("order-" + i);
                orderIds.add("order-" + i);
                if (i % 2 == 0) {
                    billingService.invoice("invoice-" + i);
                    invoiceIds.add("invoice-" + i);
                }
            }

            assertThat(readUntil(orders, orderIds.size()))
                    .as("ids on the orders topic")
                    .isEqualTo(orderIds);
            assertThat(readUntil(invoices, invoiceIds.size()))
                    .as("ids on the invoices topic")
                    .isEqualTo(invoiceIds);

            // Each outbox wrote to its own database: a message not due for an hour stays where it
            // was enqueued.
            orderService.placeLater("order-later");
            billingService.invoiceLater("invoice-later");
            JdbcTemplate ordersDb = new JdbcTemplate(app.getBean("dataSource", DataSource.class));
            JdbcTemplate billingDb =
                    new JdbcTemplate(app.getBean("billingDataSource", DataSource.class));
            assertThat(ordersDb.queryForList("SELECT id FROM outbox_message", String.class))
                    .containsExactly("order-later");
            assertThat(billingDb.queryForList("SELECT id FROM outbox_message", String.class))
                    .containsExactly("invoice-later");
        }
    }

    @Test
    @DisplayName(
            "health has one entry per outbox, both UP; billing's table gone: billing DOWN, orders UP and still publishing")
    void brokenOutboxIsDownTheOtherStaysUp() {
        Setup setup = new Setup("health");
        try (ConfigurableApplicationContext app = setup.app().run();
                KafkaConsumer<byte[], byte[]> orders = KafkaReads.consumer(setup.ordersTopic)) {
            businessTables(app);
            app.getBean(OrderService.class).place("order-1");
            app.getBean(BillingService.class).invoice("invoice-1");
            CompositeHealthContributor outbox =
                    app.getBean("outboxHealthContributor", CompositeHealthContributor.class);
            await().atMost(Duration.ofSeconds(30))
                    .until(
                            () ->
                                    published(health(outbox, "orders"))
                                            && published(health(outbox, "billing")));

            new JdbcTemplate(app.getBean("billingDataSource", DataSource.class))
                    .execute("DROP TABLE outbox_message");
            Health billing = health(outbox, "billing");
            assertThat(billing.getStatus()).isEqualTo(Status.DOWN);
            assertThat(billing.getDetails())
                    .containsEntry("store", "unreachable")
                    .containsEntry("relay", "running");
            assertThat(health(outbox, "orders").getStatus()).isEqualTo(Status.UP);

            app.getBean(OrderService.class).place("order-2");
            assertThat(readUntil(orders, 2)).containsExactlyInAnyOrder("order-1", "order-2");
            assertThat(health(outbox, "orders").getStatus()).isEqualTo(Status.UP);
        }
    }

    @Test
    @DisplayName(
            "a DataSource bean name that does not exist: APPLICATION FAILED TO START names the property, the value given and the DataSources there are")
    void unknownDataSource_failureReport(CapturedOutput output) {
        Setup setup = new Setup("report");
        Throwable failure = null;
        try (ConfigurableApplicationContext app =
                setup.app("outbox4j.outboxes.billing.data-source=billingDb").run()) {
            assertThat(app).as("the application started").isNull();
        } catch (RuntimeException e) {
            failure = e;
        }
        assertThat(failure).isNotNull();
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains(
                        "Invalid value 'billingDb' for configuration property"
                                + " 'outbox4j.outboxes.billing.data-source'")
                .contains(
                        "no bean is named 'billingDb'; the application's DataSource beans are"
                                + " [billingDataSource, dataSource]");
    }

    private static Health health(CompositeHealthContributor composite, String name) {
        return ((HealthIndicator) composite.getContributor(name)).health();
    }

    private static boolean published(Health h) {
        return h.getStatus().equals(Status.UP)
                && Long.valueOf(0).equals(h.getDetails().get("ready"))
                && Long.valueOf(0).equals(h.getDetails().get("leased"));
    }

    /**
     * Reads until {@code count} records arrived (30 s at most) and once more for stragglers;
     * returns the distinct ids read.
     */
    private static Set<String> readUntil(KafkaConsumer<byte[], byte[]> c, int count) {
        KafkaReads.Tally read = KafkaReads.readUntilCount(c, count);
        assertThat(read.records()).as("records read within 30 s").isGreaterThanOrEqualTo(count);
        return read.ids().keySet();
    }
}
