package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.annotation.Transactional;

/**
 * A Spring Boot application on real PostgreSQL and Kafka (test-services): the starter's store over
 * the application's DataSource, {@link TransactionalOutbox} in {@code @Transactional} methods, the
 * relay publishing to Kafka from {@code outbox4j.publisher.kafka.bootstrap-servers}, and its
 * graceful stop.
 */
@SpringBootTest(
        classes = OutboxPostgresKafkaTest.App.class,
        properties = {"outbox4j.store.jdbc.create-schema=true", "spring.main.banner-mode=off"})
class OutboxPostgresKafkaTest {
    static final String TOPIC = "orders-" + UUID.randomUUID();
    private static String jdbcUrl;

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        PostgresServer pg = PostgresServer.shared();
        jdbcUrl = pg.createDatabase("outbox_spring_boot");
        registry.add("spring.datasource.url", () -> jdbcUrl);
        registry.add("spring.datasource.username", pg::user);
        registry.add("spring.datasource.password", pg::password);
        KafkaServer kafka = KafkaServer.shared();
        kafka.createTopic(TOPIC, 1, Map.of());
        registry.add("outbox4j.publisher.kafka.bootstrap-servers", kafka::bootstrapServers);
    }

    /** The application: Boot's auto-configuration and one service. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(OrderService.class)
    static class App {}

    /** Writes an order and its event in one transaction. */
    static class OrderService {
        private final JdbcTemplate jdbc;
        private final TransactionalOutbox outbox;

        OrderService(JdbcTemplate jdbc, TransactionalOutbox outbox) {
            this.jdbc = jdbc;
            this.outbox = outbox;
        }

        @Transactional
        public void place(String orderId) {
            jdbc.update("INSERT INTO orders (id) VALUES (?)", orderId);
            outbox.enqueue(event(TOPIC, orderId));
        }

        @Transactional
        public void placeThenFail(String orderId) {
            place(orderId);
            throw new IllegalStateException("payment declined for " + orderId);
        }
    }

    static Message event(String topic, String orderId) {
        return Message.builder()
                .id(orderId)
                .topic(topic)
                .key("customer-1")
                .module("orders")
                .contentType("application/json")
                .payload("{\"order\":\"" + orderId + "\"}")
                .build();
    }

    @Autowired OrderService orders;
    @Autowired TransactionalOutbox outbox;
    @Autowired JdbcTemplate jdbc;

    private KafkaConsumer<byte[], byte[]> consumer;

    @BeforeEach
    void ordersTableAndConsumer() {
        jdbc.execute("CREATE TABLE IF NOT EXISTS orders (id varchar(64) PRIMARY KEY)");
        consumer = KafkaReads.consumer(TOPIC);
    }

    @AfterEach
    void closeConsumer() {
        consumer.close();
    }

    @Test
    @DisplayName(
            "a @Transactional method that commits: its message reaches Kafka with the outbox headers")
    void committedMessageIsPublished() {
        String id = "o-" + UUID.randomUUID();
        orders.place(id);

        ConsumerRecord<byte[], byte[]> record = readUntil(consumer, Set.of(id)).get(id);
        assertThat(new String(record.value(), StandardCharsets.UTF_8))
                .isEqualTo("{\"order\":\"" + id + "\"}");
        assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("customer-1");
        assertThat(
                        new String(
                                record.headers().lastHeader(OutboxHeaders.TOPIC).value(),
                                StandardCharsets.UTF_8))
                .isEqualTo(TOPIC);
    }

    @Test
    @DisplayName(
            "a @Transactional method that throws: its message is never published, a later one is")
    void rolledBackMessageIsNeverPublished() {
        String failed = "o-" + UUID.randomUUID();
        assertThatThrownBy(() -> orders.placeThenFail(failed))
                .hasMessageContaining("payment declined");
        String next = "o-" + UUID.randomUUID();
        orders.place(next);

        // Same key: the relay publishes in enqueue order, so once `next` is read, `failed` would
        // have been read before it.
        Map<String, ConsumerRecord<byte[], byte[]>> read = readUntil(consumer, Set.of(next));
        assertThat(read).doesNotContainKey(failed);
        assertThat(
                        jdbc.queryForObject(
                                "SELECT count(*) FROM orders WHERE id = ?", Long.class, failed))
                .isZero();
        assertThat(
                        jdbc.queryForObject(
                                "SELECT count(*) FROM outbox_message WHERE id = ?",
                                Long.class,
                                failed))
                .isZero();
    }

    @Test
    @DisplayName(
            "enqueue without a transaction is refused with a message that says what to do, and writes nothing")
    void enqueueWithoutTransactionIsRefused() {
        String id = "o-" + UUID.randomUUID();
        assertThatThrownBy(() -> outbox.enqueue(event(TOPIC, id)))
                .isInstanceOf(IllegalTransactionStateException.class)
                .hasMessageContaining("needs an active Spring-managed transaction")
                .hasMessageContaining("@Transactional");
        assertThat(
                        jdbc.queryForObject(
                                "SELECT count(*) FROM outbox_message WHERE id = ?", Long.class, id))
                .isZero();
    }

    @Test
    @DisplayName(
            "closing the application drains the relay: every message is published or left unleased, none both")
    void shutdownDrains() {
        String topic = "drain-" + UUID.randomUUID();
        KafkaServer.shared().createTopic(topic, 1, Map.of());
        ConfigurableApplicationContext app =
                new SpringApplicationBuilder(App.class)
                        .properties(
                                "spring.main.banner-mode=off",
                                "spring.datasource.url=" + jdbcUrl,
                                "spring.datasource.username=" + PostgresServer.shared().user(),
                                "spring.datasource.password=" + PostgresServer.shared().password(),
                                "outbox4j.store.jdbc.table-name=outbox_drain",
                                "outbox4j.store.jdbc.create-schema=true",
                                "outbox4j.relay.batch-size=20",
                                "outbox4j.publisher.kafka.bootstrap-servers="
                                        + KafkaServer.shared().bootstrapServers())
                        .run();
        List<Message> batch = new ArrayList<>();
        Set<String> all = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            String id = "d-" + i;
            all.add(id);
            batch.add(
                    Message.builder()
                            .id(id)
                            .topic(topic)
                            .key("k-" + (i % 10))
                            .module("orders")
                            .payload(id)
                            .build());
        }
        app.getBean(org.springframework.transaction.support.TransactionTemplate.class)
                .executeWithoutResult(
                        tx -> app.getBean(TransactionalOutbox.class).enqueueAll(batch));
        app.close();

        assertThat(
                        jdbc.queryForObject(
                                "SELECT count(*) FROM outbox_drain WHERE lease_owner IS NOT NULL",
                                Long.class))
                .as("leases still held after the application closed")
                .isZero();
        Set<String> left =
                new HashSet<>(jdbc.queryForList("SELECT id FROM outbox_drain", String.class));
        Set<String> published = new HashSet<>();
        try (KafkaConsumer<byte[], byte[]> c = KafkaReads.consumer(topic)) {
            published.addAll(readUntilCount(c, all.size() - left.size()).keySet());
        }
        assertThat(published)
                .as("published and still in the outbox")
                .doesNotContainAnyElementsOf(left);
        Set<String> union = new HashSet<>(published);
        union.addAll(left);
        assertThat(union).isEqualTo(all);
    }

    /** Reads until every id in {@code wanted} was seen (30 s at most); returns everything read. */
    private static Map<String, ConsumerRecord<byte[], byte[]>> readUntil(
            KafkaConsumer<byte[], byte[]> c, Set<String> wanted) {
        Map<String, ConsumerRecord<byte[], byte[]>> read = new java.util.HashMap<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!read.keySet().containsAll(wanted) && System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                read.put(KafkaReads.id(r), r);
            }
        }
        assertThat(read.keySet()).as("ids read from Kafka within 30 s").containsAll(wanted);
        return read;
    }

    /** Reads until {@code count} records were read, then one more poll to catch extras. */
    private static Map<String, Integer> readUntilCount(KafkaConsumer<byte[], byte[]> c, int count) {
        KafkaReads.Tally read = KafkaReads.readUntilCount(c, count);
        assertThat(read.records())
                .as("records read (each published message once)")
                .isEqualTo(count);
        return read.ids();
    }
}
