package io.outbox4j.publisher.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Backoff;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL store → relay → Kafka → a consumer, with the real database and broker: nothing lost,
 * headers intact, per-key order kept, a record the broker refuses dead-lettered with the reason,
 * and a broker outage survived without completing anything the broker did not acknowledge.
 */
class RelayToKafkaEndToEndTest {
    private static final Instant OCCURRED = Instant.parse("2024-06-01T08:00:00Z");
    private final List<AutoCloseable> resources = new ArrayList<>();

    @AfterEach
    void closeResources() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closeLater(T resource) {
        resources.add(resource);
        return resource;
    }

    /** A fresh PostgreSQL database with the outbox table, behind a small pool. */
    private Db database(String name) {
        PostgresServer pg = PostgresServer.shared();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pg.createDatabase(name));
        config.setUsername(pg.user());
        config.setPassword(pg.password());
        config.setMaximumPoolSize(8);
        HikariDataSource ds = closeLater(new HikariDataSource(config));
        Jdbi jdbi = Jdbi.create(ds);
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        return new Db(jdbi, store);
    }

    private record Db(Jdbi jdbi, JdbiOutboxStore store) {
        void enqueue(List<Message> messages) {
            for (int from = 0; from < messages.size(); from += 1000) {
                List<Message> chunk =
                        messages.subList(from, Math.min(messages.size(), from + 1000));
                jdbi.useTransaction(h -> store.enqueueAll(h, chunk));
            }
        }

        int pending() {
            return jdbi.withHandle(
                    h ->
                            h.createQuery(
                                            "SELECT count(*) FROM outbox_message WHERE dead_at IS NULL")
                                    .mapTo(Integer.class)
                                    .one());
        }

        List<String> pendingIds() {
            return jdbi.withHandle(
                    h ->
                            h.createQuery("SELECT id FROM outbox_message WHERE dead_at IS NULL")
                                    .mapTo(String.class)
                                    .list());
        }

        Map<String, String> deadLetters() {
            return jdbi
                    .withHandle(
                            h ->
                                    h.createQuery(
                                                    "SELECT id, dead_reason FROM outbox_message WHERE dead_at IS NOT NULL")
                                            .map(
                                                    (rs, ctx) ->
                                                            Map.entry(
                                                                    rs.getString(1),
                                                                    rs.getString(2)))
                                            .list())
                    .stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
        }
    }

    private static Message message(String topic, int i, int keys) {
        return Message.builder()
                .id("e2e-" + i)
                .topic(topic)
                .key("key-" + (i % keys))
                .module("orders")
                .contentType("application/json")
                .payload("{\"i\":" + i + "}")
                .header("seq", Integer.toString(i))
                .occurredAt(OCCURRED.plusMillis(i))
                .build();
    }

    private static void await(String what, Duration timeout, BooleanSupplier condition)
            throws InterruptedException {
        Awaitility.await(what)
                .dontCatchUncaughtExceptions()
                .atMost(timeout)
                .pollInterval(Duration.ofMillis(20))
                .until(condition::getAsBoolean);
    }

    /** Counts the relay's outcomes. */
    private static final class Outcomes implements Observer {
        private final Map<Observation.Outcome, AtomicInteger> counts =
                new EnumMap<>(Observation.Outcome.class);

        Outcomes() {
            for (Observation.Outcome o : Observation.Outcome.values()) {
                counts.put(o, new AtomicInteger());
            }
        }

        @Override
        public void onDelivery(Observation observation) {
            counts.get(observation.outcome()).incrementAndGet();
        }

        int get(Observation.Outcome outcome) {
            return counts.get(outcome).get();
        }

        @Override
        public String toString() {
            return counts.toString();
        }
    }

    /** Remembers every message the publisher reported published. */
    private static final class Recording implements Publisher {
        private final Publisher delegate;
        final Set<String> published = ConcurrentHashMap.newKeySet();

        Recording(Publisher delegate) {
            this.delegate = delegate;
        }

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            List<PublishOutcome> outcomes = delegate.publish(messages, timeout);
            for (int i = 0; i < messages.size(); i++) {
                if (outcomes.get(i).isPublished()) {
                    published.add(messages.get(i).id());
                }
            }
            return outcomes;
        }
    }

    /**
     * The system clock plus an offset the test moves, so released messages come due without
     * waiting.
     */
    private static final class OffsetClock extends Clock {
        private final AtomicLong offsetMillis = new AtomicLong();

        void advance(Duration d) {
            offsetMillis.addAndGet(d.toMillis());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Instant instant() {
            return Instant.now().plusMillis(offsetMillis.get());
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> read(
            KafkaServer kafka, String topic, int n) {
        return KafkaTopics.readAll(kafka, topic, n, Duration.ofSeconds(60));
    }

    private static int seq(ConsumerRecord<byte[], byte[]> r) {
        return Integer.parseInt(KafkaTopics.header(r, "seq"));
    }

    @Test
    void
            twentyThousandMessagesOver200Keys_allArrive_withHeadersIntact_andEachKeyInEnqueueOrderOnOnePartition()
                    throws Exception {
        int total = 20_000;
        int keys = 200;
        KafkaServer kafka = KafkaServer.shared();
        String topic = KafkaTopics.create(kafka, "e2e", 8, Map.of());
        Db db = database("kafka_e2e_bulk");
        List<Message> messages =
                IntStream.range(0, total).mapToObj(i -> message(topic, i, keys)).toList();
        db.enqueue(messages);
        KafkaPublisher publisher =
                closeLater(
                        KafkaPublisher.builder()
                                .bootstrapServers(kafka.bootstrapServers())
                                .build());
        Outcomes outcomes = new Outcomes();
        Relay relay =
                closeLater(
                        Relay.builder(db.store(), publisher)
                                .batchSize(500)
                                .workers(4)
                                .deliveryTimeout(Duration.ofSeconds(10))
                                .pollInterval(Duration.ofMillis(20))
                                .observer(outcomes)
                                .build());

        relay.start();
        await("the outbox to drain", Duration.ofMinutes(2), () -> db.pending() == 0);
        relay.close();

        assertThat(db.deadLetters()).isEmpty();
        assertThat(outcomes.get(Observation.Outcome.COMPLETED))
                .as("every message completed: " + outcomes)
                .isGreaterThanOrEqualTo(total);
        List<ConsumerRecord<byte[], byte[]>> read = read(kafka, topic, total);
        Map<Integer, ConsumerRecord<byte[], byte[]>> bySeq = new HashMap<>();
        read.forEach(r -> bySeq.putIfAbsent(seq(r), r));
        assertThat(bySeq.keySet())
                .as("every message arrived")
                .hasSize(total)
                .containsAll(IntStream.range(0, total).boxed().toList());
        for (ConsumerRecord<byte[], byte[]> r : bySeq.values()) {
            int i = seq(r);
            Message m = messages.get(i);
            assertThat(KafkaTopics.utf8(r.key())).isEqualTo(m.key().orElseThrow());
            assertThat(KafkaTopics.utf8(r.value())).isEqualTo(m.payloadAsString());
            assertThat(KafkaTopics.headers(r))
                    .containsExactly(
                            Map.entry(OutboxHeaders.ID, m.id()),
                            Map.entry(OutboxHeaders.TOPIC, topic),
                            Map.entry(OutboxHeaders.MODULE, "orders"),
                            Map.entry(OutboxHeaders.CONTENT_TYPE, "application/json"),
                            Map.entry(OutboxHeaders.OCCURRED_AT, m.occurredAt().toString()),
                            Map.entry(OutboxHeaders.KEY, m.key().orElseThrow()),
                            Map.entry("seq", Integer.toString(i)));
        }
        Map<String, List<ConsumerRecord<byte[], byte[]>>> byKey =
                KafkaTopics.byKeyOnOnePartition(read);
        assertThat(byKey).hasSize(keys);
        byKey.forEach(
                (key, records) -> {
                    List<Integer> firstSeen =
                            records.stream().map(RelayToKafkaEndToEndTest::seq).distinct().toList();
                    assertThat(firstSeen).as("order of " + key).isSorted();
                });
    }

    @Test
    void issue29_unreachableBroker_deadLetterReasonNamesTheRefusedConnection_andPromisesNoRetry() {
        String nowhere = "127.0.0.1:" + io.outbox4j.testservices.ServerSupport.freePort();
        Db db = database("kafka_e2e_unreachable");
        db.enqueue(List.of(message("orders", 1, 1)));
        KafkaPublisher publisher =
                closeLater(KafkaPublisher.builder().bootstrapServers(nowhere).build());
        Relay relay =
                closeLater(
                        Relay.builder(db.store(), publisher)
                                .maxAttempts(1)
                                .deliveryTimeout(Duration.ofSeconds(2))
                                .build());

        assertThat(relay.runOnce().deadLettered()).isEqualTo(1);

        String reason = db.deadLetters().get("e2e-1");
        System.out.println("dead-letter reason from an unreachable broker: " + reason);
        assertThat(reason)
                .startsWith("gave up after 1 attempt: ")
                .containsPattern("timeout of 1\\.8s|within 1\\.8s")
                .contains("no broker reachable: connection refused by " + nowhere)
                .doesNotContain("will be retried")
                .doesNotContain("PT2S");
    }

    @Test
    void
            recordTooLargeForTheTopic_isDeadLetteredWithTheReason_otherKeysArePublished_andItsKeyWaitsBehindIt()
                    throws Exception {
        KafkaServer kafka = KafkaServer.shared();
        String topic =
                KafkaTopics.create(kafka, "e2e-small", 1, Map.of("max.message.bytes", "32768"));
        Db db = database("kafka_e2e_too_large");
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            Message m = message(topic, i, 3);
            messages.add(i == 10 ? m.toBuilder().payload(new byte[64 * 1024]).build() : m);
        }
        db.enqueue(messages);
        // the store's default: a dead letter blocks the later messages of its key (key-1)
        List<String> blocked =
                IntStream.range(11, 30).filter(i -> i % 3 == 1).mapToObj(i -> "e2e-" + i).toList();
        OffsetClock clock = new OffsetClock();
        KafkaPublisher publisher =
                closeLater(
                        KafkaPublisher.builder()
                                .bootstrapServers(kafka.bootstrapServers())
                                .build());
        Relay relay =
                closeLater(
                        Relay.builder(db.store(), publisher)
                                .batchSize(100)
                                .workers(2)
                                .deliveryTimeout(Duration.ofSeconds(20))
                                .clock(clock)
                                .build());

        int deadLettered = 0;
        for (int round = 0; round < 20 && db.pending() > blocked.size(); round++) {
            deadLettered += relay.runOnce().deadLettered();
            clock.advance(
                    Duration.ofMinutes(
                            15)); // past any backoff of the lane that followed the dead letter
        }

        assertThat(db.pendingIds())
                .as("messages left in the outbox: the dead letter's key waits behind it")
                .containsExactlyInAnyOrderElementsOf(blocked);
        assertThat(deadLettered).isEqualTo(1);
        assertThat(db.deadLetters()).containsOnlyKeys("e2e-10");
        assertThat(db.deadLetters().get("e2e-10"))
                .contains("record too large")
                .contains("RecordTooLargeException");
        List<ConsumerRecord<byte[], byte[]>> read = read(kafka, topic, 29 - blocked.size());
        assertThat(
                        read.stream()
                                .map(r -> KafkaTopics.header(r, OutboxHeaders.ID))
                                .collect(Collectors.toSet()))
                .hasSize(29 - blocked.size())
                .doesNotContain("e2e-10")
                .doesNotContainAnyElementsOf(blocked);
        read.stream()
                .collect(Collectors.groupingBy(r -> KafkaTopics.utf8(r.key())))
                .forEach(
                        (key, records) ->
                                assertThat(
                                                records.stream()
                                                        .map(RelayToKafkaEndToEndTest::seq)
                                                        .distinct()
                                                        .toList())
                                        .as("order of " + key)
                                        .isSorted());
    }

    @Test
    void
            brokerStoppedMidRun_messagesAreReleasedAndRetried_andNothingIsCompletedThatKafkaDidNotAcknowledge()
                    throws Exception {
        int total = 2_000;
        KafkaServer kafka = KafkaTopics.stoppableBroker();
        closeLater(kafka::start); // running again for the next test, whatever happens here
        String topic = KafkaTopics.create(kafka, "e2e-outage", 3, Map.of());
        Db db = database("kafka_e2e_outage");
        db.enqueue(IntStream.range(0, total).mapToObj(i -> message(topic, i, 30)).toList());
        Recording publisher =
                new Recording(
                        closeLater(
                                KafkaPublisher.builder()
                                        .bootstrapServers(kafka.bootstrapServers())
                                        .deliveryTimeout(Duration.ofSeconds(3))
                                        .closeTimeout(Duration.ofSeconds(1))
                                        .build()));
        Outcomes outcomes = new Outcomes();
        Relay relay =
                closeLater(
                        Relay.builder(db.store(), publisher)
                                .batchSize(100)
                                .workers(4)
                                // a publish to the stopped broker fails after this long; each
                                // release round waits it out, so it sets the pace of the outage
                                .deliveryTimeout(Duration.ofMillis(300))
                                .backoff(Backoff.fixed(Duration.ofMillis(100)))
                                .maxAttempts(1_000)
                                .pollInterval(Duration.ofMillis(20))
                                .observer(outcomes)
                                .build());

        relay.start();
        await(
                "a third of the messages to be published",
                Duration.ofSeconds(60),
                () -> db.pending() <= 2 * total / 3);
        kafka.stop();
        int releasedAtStop = outcomes.get(Observation.Outcome.RELEASED);
        // once two full batches failed after the stop, nothing in flight at the stop can still
        // complete
        await(
                "messages released while the broker is down",
                Duration.ofSeconds(60),
                () -> outcomes.get(Observation.Outcome.RELEASED) >= releasedAtStop + 200);
        int pendingWhileDown = db.pending();
        int completedWhileDown = outcomes.get(Observation.Outcome.COMPLETED);
        await(
                "more releases while the broker is down",
                Duration.ofSeconds(60),
                () -> outcomes.get(Observation.Outcome.RELEASED) >= releasedAtStop + 400);
        assertThat(db.pending())
                .as("nothing completed while the broker was down")
                .isEqualTo(pendingWhileDown);
        assertThat(outcomes.get(Observation.Outcome.COMPLETED)).isEqualTo(completedWhileDown);
        assertThat(pendingWhileDown).as("the outage hit mid-run").isPositive();
        kafka.start();
        await(
                "the outbox to drain after the broker came back",
                Duration.ofSeconds(90),
                () -> db.pending() == 0);
        relay.close();

        assertThat(db.deadLetters()).isEmpty();
        assertThat(outcomes.get(Observation.Outcome.DEAD_LETTERED)).isZero();
        List<ConsumerRecord<byte[], byte[]>> read = read(kafka, topic, total);
        Set<String> inKafka = new HashSet<>();
        read.forEach(r -> inKafka.add(KafkaTopics.header(r, OutboxHeaders.ID)));
        assertThat(inKafka)
                .as("every message completed from the outbox is in Kafka")
                .hasSize(total);
        assertThat(inKafka)
                .as("every message reported published is in Kafka")
                .containsAll(publisher.published);
    }
}
