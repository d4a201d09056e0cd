package io.outbox4j.publisher.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.PostgresServer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * End to end: messages committed to a PostgreSQL outbox (store-jdbi) are moved by the relay
 * (engine) to SQS through {@link SqsPublisher}, and read back from the queue with every attribute
 * intact. Throughput is the benchmarks module's business, not this test's.
 */
@Tag("e2e")
class SqsEndToEndTest {
    private static final int MESSAGES = 5_000;

    /** FIFO: 200 groups of 25 messages, so each claimed batch holds about one message per group. */
    private static final int FIFO_KEYS = 200;

    private static HikariDataSource pool;
    private static Jdbi jdbi;

    @BeforeAll
    static void setUp() {
        PostgresServer pg = PostgresServer.shared();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pg.createDatabase("publisher_sqs_e2e"));
        config.setUsername(pg.user());
        config.setPassword(pg.password());
        config.setMaximumPoolSize(8);
        pool = new HikariDataSource(config);
        jdbi = Jdbi.create(pool);
    }

    @AfterAll
    static void closePool() {
        pool.close();
    }

    @ParameterizedTest(name = "{0} queue")
    @ValueSource(strings = {"standard", "fifo"})
    @DisplayName(
            "5 000 messages from a PostgreSQL outbox reach SQS through the relay, attributes intact; FIFO keeps "
                    + "each key's order")
    void outboxToQueue(String kind) throws Exception {
        boolean fifo = kind.equals("fifo");
        String topic = SqsTestSupport.uniqueName("e2e-" + kind, fifo);
        String url = SqsTestSupport.createQueue(topic);
        List<Message> sent = messages(topic, kind, MESSAGES);

        relayAll(kind, sent, fifo);

        // At least once: a message may arrive twice (a timed-out call retried), so read until every
        // id arrived.
        // Four consumers for the standard queue; one for the FIFO queue, whose delivery order is
        // checked.
        var received =
                SqsTestSupport.receiveDistinct(url, MESSAGES, Duration.ofMinutes(2), fifo ? 1 : 4);
        Map<String, software.amazon.awssdk.services.sqs.model.Message> firstById =
                new LinkedHashMap<>();
        received.forEach(r -> firstById.putIfAbsent(SqsTestSupport.id(r), r));
        int duplicates = received.size() - firstById.size();

        Map<String, Message> byId = new HashMap<>();
        sent.forEach(m -> byId.put(m.id(), m));
        assertThat(firstById.keySet()).isEqualTo(byId.keySet());
        if (fifo) {
            assertThat(duplicates).as("FIFO deduplicates on the message id").isZero();
        }
        for (var r : received) {
            Message m = byId.get(SqsTestSupport.id(r));
            assertThat(SqsTestSupport.payload(r)).as(m.id()).isEqualTo(m.payload());
            assertThat(SqsTestSupport.attribute(r, OutboxHeaders.TOPIC)).isEqualTo(m.topic());
            assertThat(SqsTestSupport.attribute(r, OutboxHeaders.MODULE)).isEqualTo(m.module());
            assertThat(SqsTestSupport.attribute(r, OutboxHeaders.CONTENT_TYPE))
                    .isEqualTo(m.contentType());
            assertThat(Instant.parse(SqsTestSupport.attribute(r, OutboxHeaders.OCCURRED_AT)))
                    .isEqualTo(m.occurredAt());
            assertThat(SqsTestSupport.key(r)).isEqualTo(m.key());
            assertThat(SqsTestSupport.headers(r)).as(m.id()).containsExactlyEntriesOf(m.headers());
        }
        if (fifo) {
            Map<String, List<String>> arrived = new LinkedHashMap<>();
            for (var r : firstById.values()) {
                arrived.computeIfAbsent(SqsTestSupport.groupId(r), g -> new ArrayList<>())
                        .add(SqsTestSupport.id(r));
            }
            Map<String, List<String>> expected = new LinkedHashMap<>();
            sent.forEach(
                    m ->
                            expected.computeIfAbsent(m.key().orElseThrow(), g -> new ArrayList<>())
                                    .add(m.id()));
            assertThat(arrived.keySet()).isEqualTo(Set.copyOf(expected.keySet()));
            expected.forEach(
                    (key, ids) ->
                            assertThat(arrived.get(key))
                                    .as("order of group %s", key)
                                    .containsExactlyElementsOf(ids));
        }
    }

    /**
     * Enqueues the messages in a fresh outbox table (transactions of 500) and runs a relay until
     * the table is empty. Standard queues go through the sync client, FIFO queues through the async
     * one, so both clients run end to end.
     */
    private static void relayAll(String table, List<Message> sent, boolean fifo) throws Exception {
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName("outbox_" + table).build();
        store.createSchemaIfAbsent();
        for (int from = 0; from < sent.size(); from += 500) {
            List<Message> chunk = sent.subList(from, Math.min(sent.size(), from + 500));
            jdbi.useTransaction(h -> store.enqueueAll(h, chunk));
        }

        SqsPublisher publisher =
                fifo
                        ? SqsPublisher.builder().asyncClient(SqsTestSupport.asyncClient()).build()
                        : SqsPublisher.builder().client(SqsTestSupport.client()).build();
        Relay relay =
                Relay.builder(store, publisher)
                        .owner("e2e-" + table)
                        .batchSize(200)
                        .workers(4)
                        .deliveryTimeout(Duration.ofSeconds(15))
                        .pollInterval(Duration.ofMillis(50))
                        .build();
        relay.start();
        relay.wakeUp();
        AtomicLong left = new AtomicLong(sent.size());
        try {
            Awaitility.await("the relay emptied outbox_" + table)
                    .dontCatchUncaughtExceptions()
                    .atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofMillis(50)) // polling the outbox table
                    .until(
                            () -> {
                                left.set(
                                        jdbi.withHandle(
                                                h ->
                                                        h.createQuery(
                                                                        "SELECT count(*) FROM outbox_"
                                                                                + table)
                                                                .mapTo(Long.class)
                                                                .one()));
                                return left.get() == 0;
                            });
        } finally {
            relay.close();
        }
        assertThat(left.get())
                .as("messages still in outbox_%s after the relay ran", table)
                .isZero();
    }

    /**
     * Text JSON payloads, every 10th a binary one (sent as base64), 2 headers each. Keys: for FIFO,
     * 200 groups of 25 whose order is checked; for the standard queue (which keeps no order) one
     * key per message, so the relay can put whole batches into each publish call.
     */
    private static List<Message> messages(String topic, String kind, int count) {
        List<Message> out = new ArrayList<>(count);
        Instant base = Instant.now().truncatedTo(ChronoUnit.MICROS);
        for (int i = 0; i < count; i++) {
            String id = kind + "-" + i;
            byte[] payload =
                    i % 10 == 0
                            ? ByteBuffer.allocate(12).putInt(0xCAFEBABE).putLong(i).array()
                            : ("{\"order\":" + i + ",\"note\":\"grüße ✓\"}")
                                    .getBytes(StandardCharsets.UTF_8);
            out.add(
                    Message.builder()
                            .id(id)
                            .topic(topic)
                            .module("orders")
                            .key(
                                    kind.endsWith("fifo")
                                            ? "customer-" + (i % FIFO_KEYS)
                                            : "order-" + i)
                            .contentType(
                                    i % 10 == 0 ? "application/octet-stream" : "application/json")
                            .payload(payload)
                            .header("trace-id", "t-" + i)
                            .header("tenant", "acme")
                            .occurredAt(base.plusNanos(1000L * i))
                            .build());
        }
        return out;
    }
}
