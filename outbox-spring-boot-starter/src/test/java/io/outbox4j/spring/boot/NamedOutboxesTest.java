package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.micrometer.OutboxMetrics;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.store.mongo.MongoOutboxStore;
import io.outbox4j.testservices.MongoServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Several named outboxes in one application ({@code outbox4j.outboxes.<name>.*}) on two embedded H2
 * databases, each with its own transaction manager and recording publisher: each outbox enqueues
 * into its own table and its relay publishes only its own messages; health, endpoint and meters per
 * outbox; the configuration mistakes that stop the start. PostgreSQL and Kafka: {@link
 * NamedOutboxesPostgresKafkaTest}.
 */
class NamedOutboxesTest {
    /** Two databases, their transaction managers, and a publisher per outbox. */
    @Configuration(proxyBeanMethods = false)
    static class TwoDatabases {
        @Bean
        DataSource ordersDataSource() {
            return h2();
        }

        @Bean
        DataSource billingDataSource() {
            return h2();
        }

        @Bean
        PlatformTransactionManager ordersTransactionManager(
                @Qualifier("ordersDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        PlatformTransactionManager billingTransactionManager(
                @Qualifier("billingDataSource") DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        @Bean
        RecordingPublisher ordersPublisher() {
            return new RecordingPublisher();
        }

        @Bean
        RecordingPublisher billingPublisher() {
            return new RecordingPublisher();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    private static DataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner()
                    .withConfiguration(
                            AutoConfigurations.of(
                                    OutboxAutoConfiguration.class,
                                    OutboxRelayAutoConfiguration.class,
                                    OutboxHealthAutoConfiguration.class,
                                    OutboxMetricsAutoConfiguration.class,
                                    OutboxEndpointAutoConfiguration.class))
                    .withUserConfiguration(TwoDatabases.class)
                    .withPropertyValues(
                            "management.endpoints.web.exposure.include=health,outbox",
                            "outbox4j.health.statistics-cache-ttl=0s",
                            "outbox4j.outboxes.orders.primary=true",
                            "outbox4j.outboxes.orders.data-source=ordersDataSource",
                            "outbox4j.outboxes.orders.publisher-bean=ordersPublisher",
                            "outbox4j.outboxes.orders.store.jdbc.create-schema=true",
                            "outbox4j.outboxes.billing.data-source=billingDataSource",
                            "outbox4j.outboxes.billing.publisher-bean=billingPublisher",
                            "outbox4j.outboxes.billing.store.jdbc.create-schema=true",
                            "outbox4j.outboxes.billing.store.jdbc.table-name=billing_outbox");

    private static Message message(String id, String topic) {
        return Message.builder()
                .id(id)
                .topic(topic)
                .key("k-" + id)
                .module("shop")
                .payload(id)
                .build();
    }

    private static TransactionTemplate tx(AssertableApplicationContext context, String manager) {
        return new TransactionTemplate(context.getBean(manager, PlatformTransactionManager.class));
    }

    private static TransactionalOutbox outbox(AssertableApplicationContext context, String name) {
        return BeanFactoryAnnotationUtils.qualifiedBeanOfType(
                context.getBeanFactory(), TransactionalOutbox.class, name);
    }

    @Test
    @DisplayName(
            "two outboxes on two DataSources: each enqueues into its own table in its own transaction and its relay publishes only its own messages")
    void eachOutboxPublishesItsOwnMessages() {
        runner.run(
                context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBeansOfType(JdbiOutboxStore.class))
                            .containsOnlyKeys("ordersOutboxStore", "billingOutboxStore");
                    assertThat(context.getBeansOfType(TransactionalOutbox.class))
                            .containsOnlyKeys(
                                    "ordersTransactionalOutbox", "billingTransactionalOutbox");
                    assertThat(context.getBean(TransactionalOutbox.class))
                            .as("the primary outbox is the one injected without a qualifier")
                            .isSameAs(context.getBean("ordersTransactionalOutbox"));
                    assertThat(
                                    BeanFactoryAnnotationUtils.qualifiedBeanOfType(
                                            context.getBeanFactory(), OutboxStore.class, "billing"))
                            .isSameAs(context.getBean("billingOutboxStore"));
                    assertThat(
                                    context.getBean("ordersOutboxRelay", RelayLifecycle.class)
                                            .isRunning())
                            .isTrue();
                    assertThat(
                                    context.getBean("billingOutboxRelay", RelayLifecycle.class)
                                            .isRunning())
                            .isTrue();

                    List<String> orderIds = new ArrayList<>();
                    List<String> invoiceIds = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {
                        String id = "order-" + i;
                        orderIds.add(id);
                        tx(context, "ordersTransactionManager")
                                .executeWithoutResult(
                                        t ->
                                                outbox(context, "orders")
                                                        .enqueue(message(id, "orders")));
                    }
                    for (int i = 0; i < 3; i++) {
                        String id = "invoice-" + i;
                        invoiceIds.add(id);
                        tx(context, "billingTransactionManager")
                                .executeWithoutResult(
                                        t ->
                                                outbox(context, "billing")
                                                        .enqueue(message(id, "invoices")));
                    }
                    RecordingPublisher orders =
                            context.getBean("ordersPublisher", RecordingPublisher.class);
                    RecordingPublisher billing =
                            context.getBean("billingPublisher", RecordingPublisher.class);
                    await().atMost(Duration.ofSeconds(10))
                            .until(
                                    () ->
                                            orders.publishedIds().size() >= 5
                                                    && billing.publishedIds().size() >= 3);
                    assertThat(orders.publishedIds()).containsExactlyInAnyOrderElementsOf(orderIds);
                    assertThat(billing.publishedIds())
                            .containsExactlyInAnyOrderElementsOf(invoiceIds);

                    assertThatThrownBy(
                                    () ->
                                            tx(context, "ordersTransactionManager")
                                                    .executeWithoutResult(
                                                            t ->
                                                                    outbox(context, "billing")
                                                                            .enqueue(
                                                                                    message(
                                                                                            "stray",
                                                                                            "invoices"))))
                            .as("billing's outbox inside a transaction of orders' DataSource")
                            .isInstanceOf(IllegalTransactionStateException.class)
                            .hasMessageContaining("holds no connection of the outbox's DataSource");
                    assertThat(
                                    new JdbcTemplate(
                                                    context.getBean(
                                                            "billingDataSource", DataSource.class))
                                            .queryForObject(
                                                    "SELECT count(*) FROM \"billing_outbox\""
                                                            + " WHERE id = 'stray'",
                                                    Long.class))
                            .as("the stray message was not written")
                            .isZero();
                    assertThat(billing.publishedIds()).doesNotContain("stray");
                });
    }

    @Test
    @DisplayName(
            "health is an 'outbox' composite with one entry per outbox; a broken one is DOWN while the other stays UP")
    void healthPerOutbox_oneBrokenOneUp() {
        runner.run(
                context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean("outboxHealthIndicator");
                    CompositeHealthContributor outbox =
                            context.getBean(
                                    "outboxHealthContributor", CompositeHealthContributor.class);
                    assertThat(outbox.stream().map(e -> e.name()))
                            .containsExactly("orders", "billing");
                    assertThat(health(outbox, "orders").getStatus()).isEqualTo(Status.UP);
                    assertThat(health(outbox, "billing").getStatus()).isEqualTo(Status.UP);

                    new JdbcTemplate(context.getBean("billingDataSource", DataSource.class))
                            .execute("DROP TABLE \"billing_outbox\"");

                    Health billing = health(outbox, "billing");
                    assertThat(billing.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(billing.getDetails()).containsEntry("store", "unreachable");
                    Health orders = health(outbox, "orders");
                    assertThat(orders.getStatus()).isEqualTo(Status.UP);
                    assertThat(orders.getDetails()).containsEntry("relay", "running");

                    tx(context, "ordersTransactionManager")
                            .executeWithoutResult(
                                    t ->
                                            outbox(context, "orders")
                                                    .enqueue(message("after", "orders")));
                    await().atMost(Duration.ofSeconds(10))
                            .until(
                                    () ->
                                            context.getBean(
                                                            "ordersPublisher",
                                                            RecordingPublisher.class)
                                                    .publishedIds()
                                                    .contains("after"));
                });
    }

    private static Health health(CompositeHealthContributor composite, String name) {
        return ((HealthIndicator) composite.getContributor(name)).health();
    }

    @Test
    @DisplayName(
            "meters per outbox, tagged outbox=<name>: each relay's deliveries and state counted apart")
    void metersTaggedByOutbox() {
        runner.run(
                context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBeansOfType(OutboxMetrics.class))
                            .containsOnlyKeys("ordersOutboxMetrics", "billingOutboxMetrics");
                    tx(context, "ordersTransactionManager")
                            .executeWithoutResult(
                                    t ->
                                            outbox(context, "orders")
                                                    .enqueueAll(
                                                            List.of(
                                                                    message("o-1", "orders"),
                                                                    message("o-2", "orders"))));
                    tx(context, "billingTransactionManager")
                            .executeWithoutResult(
                                    t ->
                                            outbox(context, "billing")
                                                    .enqueue(message("b-1", "invoices")));
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    await().atMost(Duration.ofSeconds(10))
                            .until(
                                    () ->
                                            completed(registry, "orders") == 2
                                                    && completed(registry, "billing") == 1);
                    assertThat(
                                    registry.get(OutboxMetrics.RELAY_STATE)
                                            .tag("outbox", "billing")
                                            .tag("state", "running")
                                            .gauge()
                                            .value())
                            .isEqualTo(1);
                    assertThat(
                                    registry.find(OutboxMetrics.DELIVERIES)
                                            .tag("outbox", "billing")
                                            .tag("topic", "orders")
                                            .counter())
                            .as("no orders message counted under billing")
                            .isNull();
                });
    }

    private static double completed(MeterRegistry registry, String outbox) {
        var c =
                registry.find(OutboxMetrics.DELIVERIES)
                        .tag("outbox", outbox)
                        .tag("outcome", "completed")
                        .counter();
        return c == null ? 0 : c.count();
    }

    @Test
    @DisplayName(
            "the endpoint selects by name: all outboxes, one outbox, its dead letters and their replay; an unknown name 404s listing the names")
    void endpointByName() {
        runner.run(
                context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(OutboxEndpoint.class);
                    OutboxesEndpoint endpoint = context.getBean(OutboxesEndpoint.class);
                    RecordingPublisher billing =
                            context.getBean("billingPublisher", RecordingPublisher.class);
                    billing.refuse(m -> m.id().equals("poison"));
                    tx(context, "billingTransactionManager")
                            .executeWithoutResult(
                                    t ->
                                            outbox(context, "billing")
                                                    .enqueue(message("poison", "invoices")));
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> dead(endpoint, "billing") == 1);
                    assertThat(dead(endpoint, "orders")).isZero();
                    assertThat(endpoint.statistics().get("outboxes"))
                            .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                            .containsOnlyKeys("orders", "billing");

                    Map<String, Object> page =
                            endpoint.deadLetters("billing", "dead-letters", null, null, null)
                                    .getBody();
                    assertThat(page.get("items").toString()).contains("poison");
                    assertThat(
                                    endpoint.deadLetters("orders", "dead-letters", null, null, null)
                                            .getBody()
                                            .get("items")
                                            .toString())
                            .isEqualTo("[]");

                    assertThat(endpoint.outbox("billing").getBody().get("members").toString())
                            .as(
                                    "billing's relay is its only member, its owner named after the outbox")
                            .startsWith("[{id=billing-")
                            .contains("buckets=256");
                    WebEndpointResponse<Map<String, Object>> unknown = endpoint.outbox("shipping");
                    assertThat(unknown.getStatus()).isEqualTo(404);
                    assertThat(unknown.getBody().get("error").toString())
                            .isEqualTo(
                                    "no outbox is named 'shipping'; the outboxes are [orders, billing]");

                    billing.refuse(m -> false);
                    assertThat(endpoint.act("orders", "replay", "poison", null, null).getStatus())
                            .as("poison is not a dead letter of orders")
                            .isEqualTo(404);
                    assertThat(endpoint.act("billing", "replay", "poison", null, null).getBody())
                            .containsEntry("replayed", 1);
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> billing.publishedIds().contains("poison"));
                });
    }

    @SuppressWarnings("unchecked")
    private static long dead(OutboxesEndpoint endpoint, String name) {
        Map<String, Object> total =
                (Map<String, Object>) endpoint.outbox(name).getBody().get("total");
        return ((Number) total.get("dead")).longValue();
    }

    @Test
    @DisplayName(
            "relay.enabled=false on one outbox: no relay and no publisher needed for it, its health says so; the other relays")
    void oneOutboxRelayedElsewhere() {
        runner.withPropertyValues(
                        "outbox4j.outboxes.billing.relay.enabled=false",
                        "outbox4j.outboxes.billing.publisher-bean=")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean("billingOutboxRelay");
                            assertThat(context).hasBean("ordersOutboxRelay");
                            CompositeHealthContributor outbox =
                                    context.getBean(
                                            "outboxHealthContributor",
                                            CompositeHealthContributor.class);
                            assertThat(health(outbox, "billing").getDetails())
                                    .containsEntry("relay", "not run by this application");
                        });
    }

    @Test
    @DisplayName(
            "a JDBC outbox and a MongoDB outbox side by side: a store each, a TransactionalOutbox for the JDBC one, both relays running, both in health")
    void jdbcAndMongoSideBySide() {
        runner.withBean(
                        "mongoClient",
                        MongoClient.class,
                        () -> MongoClients.create(MongoServer.shared().connectionString()))
                .withPropertyValues(
                        "outbox4j.outboxes.billing.data-source=",
                        "outbox4j.outboxes.billing.mongo-client=mongoClient",
                        "outbox4j.outboxes.billing.store.mongodb.database=named_outboxes_"
                                + UUID.randomUUID().toString().substring(0, 8),
                        "outbox4j.outboxes.billing.store.mongodb.create-indexes=true")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context.getBean("billingOutboxStore"))
                                    .isInstanceOf(MongoOutboxStore.class);
                            assertThat(context.getBean("ordersOutboxStore"))
                                    .isInstanceOf(JdbiOutboxStore.class);
                            assertThat(context).doesNotHaveBean("billingTransactionalOutbox");
                            assertThat(
                                            context.getBean(
                                                            "billingOutboxRelay",
                                                            RelayLifecycle.class)
                                                    .isRunning())
                                    .isTrue();
                            CompositeHealthContributor outbox =
                                    context.getBean(
                                            "outboxHealthContributor",
                                            CompositeHealthContributor.class);
                            assertThat(health(outbox, "billing").getStatus()).isEqualTo(Status.UP);
                            assertThat(health(outbox, "orders").getStatus()).isEqualTo(Status.UP);
                        });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(
            delimiter = '|',
            value = {
                // a DataSource bean that does not exist
                "outbox4j.outboxes.billing.data-source|billingDb|outbox4j.outboxes.billing.data-source|no bean is named 'billingDb'; the application's DataSource beans are [ordersDataSource, billingDataSource]",
                // a bean that is no DataSource
                "outbox4j.outboxes.billing.data-source|billingPublisher|outbox4j.outboxes.billing.data-source|the bean 'billingPublisher' is a io.outbox4j.spring.boot.RecordingPublisher, not a javax.sql.DataSource",
                // no DataSource named and several to choose from
                "outbox4j.outboxes.billing.data-source||outbox4j.outboxes.billing.data-source|must name this outbox's DataSource bean: the application has several [ordersDataSource, billingDataSource] and none is primary",
                // two primaries
                "outbox4j.outboxes.billing.primary|true|outbox4j.outboxes.billing.primary|outbox 'orders' is primary too; mark at most one outbox primary",
                // a single-outbox setting beside named outboxes
                "outbox4j.store.jdbc.table-name|events|outbox4j.store.jdbc.table-name|configures the single outbox, but outbox4j.outboxes names [orders, billing] and each of them has its own; set outbox4j.outboxes.<name>.store.jdbc.table-name instead",
                "outbox4j.relay.batch-size|50|outbox4j.relay.batch-size|set outbox4j.outboxes.<name>.relay.batch-size instead",
                // a bad value of a named outbox is named with its outbox
                "outbox4j.outboxes.billing.relay.batch-size|0|outbox4j.outboxes.billing.relay.batch-size|must be between 1 and 10000, but was 0",
                "outbox4j.outboxes.billing.store.jdbc.table-name|billing-outbox|outbox4j.outboxes.billing.store.jdbc.table-name|tableName must match",
                // a Publisher bean that does not exist
                "outbox4j.outboxes.billing.publisher-bean|kafka|outbox4j.outboxes.billing.publisher-bean|no bean is named 'kafka'; the application's Publisher beans are [ordersPublisher, billingPublisher]",
                // a publisher bean and publisher settings for one outbox
                "outbox4j.outboxes.billing.publisher.kafka.bootstrap-servers|localhost:9092|outbox4j.outboxes.billing.publisher-bean|and outbox4j.outboxes.billing.publisher.* are both given; keep one of them",
                // a name that cannot name beans, health entries and paths
                "outbox4j.outboxes.2nd.data-source|billingDataSource|outbox4j.outboxes.2nd|an outbox's name must start with a letter",
            })
    @DisplayName(
            "a configuration mistake stops the start with Boot's report naming the property, the value and what was wrong")
    void badConfigurationFailsTheStart(
            String property, String value, String reported, String reason) {
        runner.withPropertyValues(property + "=" + (value == null ? "" : value))
                .run(context -> StarterContexts.assertRefused(context, reported, reason));
    }

    @Test
    @DisplayName(
            "two outboxes on the same table of one DataSource stop the start, naming both outboxes, the table and the DataSource")
    void twoOutboxesOnOneTable() {
        runner.withPropertyValues(
                        "outbox4j.outboxes.billing.data-source=ordersDataSource",
                        "outbox4j.outboxes.billing.store.jdbc.table-name=outbox_message")
                .run(
                        context -> {
                            InvalidConfigurationPropertyValueException invalid =
                                    StarterContexts.assertRefusedExactly(
                                            context,
                                            "outbox4j.outboxes.billing.store.jdbc.table-name",
                                            "outbox 'orders' already lives in table 'outbox_message' of the"
                                                    + " same DataSource ('ordersDataSource'); two outboxes in one"
                                                    + " place would relay each other's messages: give one of"
                                                    + " them another table-name or data-source");
                            assertThat(invalid.getValue()).isEqualTo("outbox_message");
                        });
        runner.withPropertyValues(
                        "outbox4j.outboxes.billing.data-source=ordersDataSource",
                        "outbox4j.outboxes.billing.store.jdbc.table-name=billing_outbox")
                .run(
                        context ->
                                assertThat(context)
                                        .as("two tables of one DataSource are fine")
                                        .hasNotFailed());
    }

    @Test
    @DisplayName(
            "an outbox whose relay has no publisher stops the start; the report names that outbox's properties")
    void namedOutboxWithoutPublisher() {
        runner.withPropertyValues("outbox4j.outboxes.billing.publisher-bean=")
                .run(
                        context ->
                                StarterContexts.assertRefusedExactly(
                                        context,
                                        "outbox4j.outboxes.billing.publisher-bean",
                                        "must name the Publisher bean of outbox 'billing': the"
                                                + " application has several [ordersPublisher,"
                                                + " billingPublisher] and none is primary"));
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                OutboxAutoConfiguration.class, OutboxRelayAutoConfiguration.class))
                .withBean("ordersDataSource", DataSource.class, NamedOutboxesTest::h2)
                .withPropertyValues("outbox4j.outboxes.orders.store.jdbc.create-schema=true")
                .run(
                        context -> {
                            assertThat(context).hasFailed();
                            StarterContexts.cause(
                                    context.getStartupFailure(), NoPublisherException.class);
                            FailureAnalysis analysis =
                                    new OutboxFailureAnalyzer()
                                            .analyze(context.getStartupFailure());
                            assertThat(analysis.getDescription())
                                    .contains("outbox4j's outbox 'orders'");
                            assertThat(analysis.getAction())
                                    .contains(
                                            "outbox4j.outboxes.orders.publisher.kafka.bootstrap-servers")
                                    .contains("outbox4j.outboxes.orders.publisher-bean")
                                    .contains("outbox4j.outboxes.orders.relay.enabled=false");
                        });
    }

    @Test
    @DisplayName(
            "one named outbox on the application's only DataSource needs no data-source, and outbox4j.publisher.* is shared")
    void oneNamedOutboxDefaults() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                OutboxAutoConfiguration.class, OutboxRelayAutoConfiguration.class))
                .withBean("dataSource", DataSource.class, NamedOutboxesTest::h2)
                .withPropertyValues(
                        "outbox4j.outboxes.orders.store.jdbc.create-schema=true",
                        "outbox4j.publisher.kafka.bootstrap-servers=127.0.0.1:9",
                        "outbox4j.outboxes.orders.relay.poll-interval=1h")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).hasSingleBean(TransactionalOutbox.class);
                            assertThat(context.getBean("outboxPublisher").toString())
                                    .contains("KafkaPublisher");
                            assertThat(context).doesNotHaveBean("outboxStore");
                            assertThat(context).doesNotHaveBean("outboxRelay");
                        });
    }

    /** The application's own store for billing, in a table of its choosing. */
    @Configuration(proxyBeanMethods = false)
    static class OwnBillingStore {
        @Bean
        JdbiOutboxStore billingOutboxStore(@Qualifier("billingDataSource") DataSource billing) {
            JdbiOutboxStore own =
                    JdbiOutboxStore.builder(org.jdbi.v3.core.Jdbi.create(billing))
                            .tableName("own_billing")
                            .build();
            own.createSchemaIfAbsent();
            return own;
        }
    }

    @Test
    @DisplayName(
            "a bean of the application's own under an outbox's bean name wins: that outbox's TransactionalOutbox, relay and health use it")
    void ownStoreBeanWins() {
        runner.withUserConfiguration(OwnBillingStore.class)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(
                                            context.getBean(
                                                            "billingOutboxStore",
                                                            JdbiOutboxStore.class)
                                                    .tableName())
                                    .isEqualTo("own_billing");
                            tx(context, "billingTransactionManager")
                                    .executeWithoutResult(
                                            t ->
                                                    outbox(context, "billing")
                                                            .enqueue(message("b-own", "invoices")));
                            await().atMost(Duration.ofSeconds(10))
                                    .until(
                                            () ->
                                                    context.getBean(
                                                                    "billingPublisher",
                                                                    RecordingPublisher.class)
                                                            .publishedIds()
                                                            .contains("b-own"));
                            CompositeHealthContributor outbox =
                                    context.getBean(
                                            "outboxHealthContributor",
                                            CompositeHealthContributor.class);
                            assertThat(health(outbox, "billing").getStatus()).isEqualTo(Status.UP);
                        });
    }

    @Test
    @DisplayName("outbox4j.enabled=false configures none of the named outboxes, nor their meters")
    void turnedOff() {
        runner.withPropertyValues("outbox4j.enabled=false")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context)
                                    .doesNotHaveBean(NamedOutboxes.BEAN)
                                    .doesNotHaveBean(OutboxStore.class)
                                    .doesNotHaveBean(TransactionalOutbox.class)
                                    .doesNotHaveBean(OutboxMetrics.class)
                                    .doesNotHaveBean("outboxHealthContributor");
                        });
    }

    @Test
    @DisplayName(
            "without outbox4j.outboxes the single outbox keeps its bean names: outboxStore, transactionalOutbox, outboxRelay, outboxHealthIndicator")
    void singleOutboxUnchanged() {
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                OutboxAutoConfiguration.class,
                                OutboxRelayAutoConfiguration.class,
                                OutboxHealthAutoConfiguration.class))
                .withBean("dataSource", DataSource.class, NamedOutboxesTest::h2)
                .withBean("publisher", RecordingPublisher.class, RecordingPublisher::new)
                .withPropertyValues("outbox4j.store.jdbc.create-schema=true")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context)
                                    .hasBean("outboxStore")
                                    .hasBean("transactionalOutbox")
                                    .hasBean("outboxRelay")
                                    .hasBean("outboxHealthIndicator")
                                    .doesNotHaveBean(NamedOutboxes.BEAN)
                                    .doesNotHaveBean("outboxHealthContributor");
                        });
    }
}
