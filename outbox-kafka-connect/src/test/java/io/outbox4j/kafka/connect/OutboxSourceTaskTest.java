package io.outbox4j.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.PostgresServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.source.SourceRecord;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The task on its own against PostgreSQL, driven as a Connect worker drives it: {@code start},
 * {@code poll}, {@code commitRecord} (what the producer's callback calls once Kafka acknowledged a
 * record), {@code stop}. The worker itself is exercised by {@code OutboxConnectorIT}.
 */
class OutboxSourceTaskTest {
    private static String url;
    private static PostgresServer pg;
    private static Jdbi jdbi;
    private static JdbiOutboxStore store;

    private final List<OutboxSourceTask> tasks = new ArrayList<>();

    @BeforeAll
    static void database() {
        pg = PostgresServer.shared();
        url = pg.createDatabase("outbox_connect_task");
        jdbi = Jdbi.create(url, pg.user(), pg.password());
        store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
    }

    @BeforeEach
    void emptyOutbox() {
        jdbi.useHandle(
                h -> {
                    h.execute("DELETE FROM outbox_message");
                    h.execute("DELETE FROM outbox_message_members");
                    h.execute("UPDATE outbox_message_buckets SET owner = NULL");
                });
    }

    @AfterEach
    void stopTasks() {
        tasks.forEach(OutboxSourceTask::stop);
    }

    private OutboxSourceTask start(Map<String, String> extra) {
        Map<String, String> props = new HashMap<>();
        props.put("name", "task-test");
        props.put(OutboxSourceConnectorConfig.JDBC_URL, url);
        props.put(OutboxSourceConnectorConfig.JDBC_USER, pg.user());
        props.put(OutboxSourceConnectorConfig.JDBC_PASSWORD, pg.password());
        props.put(OutboxSourceConnectorConfig.COMPLETION_INTERVAL_MS, "50");
        props.put(OutboxSourceConnectorConfig.POLL_INTERVAL_MS, "100");
        props.put(OutboxSourceTask.TASK_INDEX, Integer.toString(tasks.size()));
        props.putAll(extra);
        OutboxSourceTask t = new OutboxSourceTask();
        t.start(props);
        tasks.add(t);
        return t;
    }

    private static void enqueue(String id, String topic, String key) {
        enqueue(store, id, topic, key);
    }

    private static void enqueue(JdbiOutboxStore writer, String id, String topic, String key) {
        jdbi.useTransaction(
                h ->
                        writer.enqueue(
                                h,
                                Message.builder()
                                        .id(id)
                                        .topic(topic)
                                        .key(key)
                                        .module("test")
                                        .payload("payload of " + id)
                                        .build()));
    }

    private static List<SourceRecord> pollUntilSome(OutboxSourceTask t) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            List<SourceRecord> r = t.poll();
            if (r != null) {
                return r;
            }
        }
        throw new AssertionError("the task returned no record within 10 s");
    }

    private static void acknowledge(OutboxSourceTask t, List<SourceRecord> records) {
        for (SourceRecord r : records) {
            t.commitRecord(r, new RecordMetadata(new TopicPartition(r.topic(), 0), 0, 0, 0, 0, 0));
        }
    }

    private static List<String> ids(List<SourceRecord> records) {
        List<String> out = new ArrayList<>();
        for (SourceRecord r : records) {
            out.add((String) r.headers().lastWithName(OutboxHeaders.ID).value());
        }
        return out;
    }

    private static int rows() {
        return jdbi.withHandle(
                h ->
                        h.createQuery("SELECT count(*) FROM outbox_message")
                                .mapTo(Integer.class)
                                .one());
    }

    private static List<Delivery> claimAsSomeoneElse() {
        return store.claim(
                new ClaimRequest("someone-else", Instant.now(), Duration.ofSeconds(30), 100));
    }

    private static void await(String what, BooleanSupplier condition) {
        Awaitility.await(what)
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(condition::getAsBoolean);
    }

    /** Whether message {@code id} is still in the outbox (not completed). */
    private static boolean present(String id) {
        return byId("SELECT count(*) FROM outbox_message WHERE id = :id", id, Integer.class) == 1;
    }

    /** The end of the lease of message {@code id}, by the database's clock. */
    private static Instant leaseEnd(String id) {
        return byId("SELECT available_at FROM outbox_message WHERE id = :id", id, Instant.class);
    }

    /** Why message {@code id} was dead-lettered. */
    private static String deadReason(String id) {
        return byId("SELECT dead_reason FROM outbox_message WHERE id = :id", id, String.class);
    }

    /** The one value {@code sql} reads about the message {@code id} (bound as {@code :id}). */
    private static <T> T byId(String sql, String id, Class<T> type) {
        return jdbi.withHandle(h -> h.createQuery(sql).bind("id", id).mapTo(type).one());
    }

    /** Whether the lease of message {@code id} has ended by the database's clock. */
    private static boolean leaseEnded(String id) {
        return byId(
                "SELECT available_at <= now() FROM outbox_message WHERE id = :id",
                id,
                Boolean.class);
    }

    @Test
    void aMessageIsCompletedOnlyOnceKafkaAcknowledgedItsRecord() throws Exception {
        enqueue("m-1", "orders", "k-1");
        enqueue("m-2", "orders", "k-2");
        OutboxSourceTask task = start(Map.of());

        List<SourceRecord> records = pollUntilSome(task);
        assertThat(ids(records)).containsExactly("m-1", "m-2");
        assertThat(rows()).as("nothing is completed before Kafka acknowledged it").isEqualTo(2);

        acknowledge(task, records.subList(0, 1));
        // the completion that took m-1 had m-2's record in flight too: it must have left it
        await("m-1 completed", () -> !present("m-1"));
        assertThat(present("m-2"))
                .as("a message whose record is not acknowledged stays after a completion")
                .isTrue();
        assertThat(claimAsSomeoneElse()).as("and stays leased to the task").isEmpty();
        acknowledge(task, records.subList(1, 2));
        await("m-2 completed", () -> rows() == 0);
    }

    /** Cross-process wake-up (docs/relay.md): a commit ends the task's idle wait at once. */
    @Test
    void aCommitByAnotherStore_endsTheTasksIdleWait_longBeforeItsPollInterval() throws Exception {
        OutboxSourceTask t = start(Map.of(OutboxSourceConnectorConfig.POLL_INTERVAL_MS, "30000"));
        AtomicReference<List<SourceRecord>> polled = new AtomicReference<>();
        Thread poller =
                new Thread(
                        () -> {
                            try {
                                List<SourceRecord> r = null;
                                while (r == null && !Thread.currentThread().isInterrupted()) {
                                    r = t.poll();
                                }
                                polled.set(r);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        "wake-up-poller");
        poller.start();
        try {
            await(
                    "the task joined and listens",
                    () ->
                            jdbi.withHandle(
                                            h ->
                                                    h.createQuery(
                                                                    "SELECT (SELECT count(*) FROM"
                                                                            + " outbox_message_members) +"
                                                                            + " (SELECT count(*) FROM"
                                                                            + " pg_stat_activity WHERE query"
                                                                            + " LIKE 'LISTEN %')")
                                                            .mapTo(Integer.class)
                                                            .one())
                                    == 2);
            long committed = System.nanoTime();
            enqueue("w1", "orders", "k1");
            await("the record", () -> polled.get() != null);
            assertThat(Duration.ofNanos(System.nanoTime() - committed))
                    .as("commit to record with a 30 s poll interval")
                    .isLessThan(Duration.ofSeconds(2));
            assertThat(ids(polled.get())).containsExactly("w1");
        } finally {
            poller.interrupt();
            poller.join(5_000);
        }
    }

    /**
     * Adaptive polling ({@code AdaptivePolling}): a task that no wake-up reaches (the writer sends
     * no signal, as on MariaDB, MySQL and H2) claims again within milliseconds after a claim that
     * found messages, not at the end of its poll interval.
     */
    @Test
    void withoutWakeUps_aCommitSoonAfterARecord_isPolledWithinMilliseconds_notAPollInterval()
            throws Exception {
        JdbiOutboxStore unsignalled = JdbiOutboxStore.builder(jdbi).signalCommits(false).build();
        OutboxSourceTask t = start(Map.of(OutboxSourceConnectorConfig.POLL_INTERVAL_MS, "3000"));
        BlockingQueue<SourceRecord> polled = new LinkedBlockingQueue<>();
        Thread poller = new Thread(() -> pollForever(t, polled), "connect-poller");
        poller.start();
        try {
            enqueue(unsignalled, "a1", "orders", "k-a1");
            SourceRecord first = polled.poll(10, TimeUnit.SECONDS);
            assertThat(first).as("a1 polled").isNotNull();
            acknowledge(t, List.of(first));
            // a1's completion ends one idle wait of the task (it may unblock keys); the writer
            // commits a2 300 ms after it, when nothing but the task's own polling can find a2
            // (the task's idle waits since the claim that found a1: 10, 20, 40 ... ms; without
            // adaptive polling it would wait its 3 s interval)
            await("a1 completed", () -> rows() == 0);
            Thread.sleep(300); // the writer's pace, not a wait for a condition
            long committed = System.nanoTime();
            enqueue(unsignalled, "a2", "orders", "k-a2");
            SourceRecord second = polled.poll(10, TimeUnit.SECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - committed);
            assertThat(second).as("a2 polled").isNotNull();
            assertThat(took)
                    .as(
                            "commit to record with a 3 s poll interval and no wake-up, right"
                                    + " after a claim that found a message")
                    .isLessThan(Duration.ofMillis(1500));
        } finally {
            poller.interrupt();
            poller.join(10_000);
        }
    }

    /** What a Connect worker does: poll until interrupted, handing the records on. */
    private static void pollForever(OutboxSourceTask task, BlockingQueue<SourceRecord> out) {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                List<SourceRecord> r = task.poll();
                if (r != null) {
                    out.addAll(r);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aRecordDroppedByConnect_nullMetadata_completesItsMessage() throws Exception {
        enqueue("m-1", "orders", null);
        OutboxSourceTask task = start(Map.of());
        List<SourceRecord> records = pollUntilSome(task);
        task.commitRecord(records.get(0), null);
        await("m-1 completed", () -> rows() == 0);
    }

    @Test
    void leasesOfUnacknowledgedRecordsAreRenewed_andExpireOnlyAfterTheTaskStopped()
            throws Exception {
        enqueue("m-1", "orders", "k-1");
        OutboxSourceTask task = start(Map.of(OutboxSourceConnectorConfig.LEASE_MS, "1000"));
        pollUntilSome(task);
        Instant firstEnd = leaseEnd("m-1");

        // the witness: renewals carried the lease two leases past its first end (so the first
        // end has passed by a lease); no one else may claim the message meanwhile
        Awaitility.await("the task renewed the lease past its first end")
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .failFast(
                        "a renewed lease is still live: someone else claimed the message",
                        () -> !claimAsSomeoneElse().isEmpty())
                .until(() -> !leaseEnd("m-1").isBefore(firstEnd.plusSeconds(2)));
        assertThat(claimAsSomeoneElse()).as("a renewed lease is still live").isEmpty();

        task.stop();
        tasks.remove(task);
        AtomicReference<List<Delivery>> claimed = new AtomicReference<>(List.of());
        await(
                "claimed again once the stopped task's lease expired",
                () -> {
                    claimed.set(claimAsSomeoneElse());
                    return !claimed.get().isEmpty();
                });
        List<Delivery> again = claimed.get();
        assertThat(again).hasSize(1);
        assertThat(again.get(0).attempt()).isEqualTo(2);
    }

    @Test
    void twoTasks_splitTheKeysByBucket_andNeverHoldTwoMessagesOfOneKey() throws Exception {
        OutboxSourceTask first = start(Map.of());
        OutboxSourceTask second = start(Map.of());
        assertThat(first.poll()).isNull(); // each poll joins the outbox first
        assertThat(second.poll()).isNull();
        await("both tasks are members", () -> members().size() == 2);
        // a key of each task's buckets
        String ownerOfK = ownerOf("k");
        String otherKey = null;
        for (int i = 0; otherKey == null; i++) {
            String candidate = "other-" + i;
            if (!ownerOf(candidate).equals(ownerOfK)) {
                otherKey = candidate;
            }
        }
        enqueue("m-1", "orders", "k");
        enqueue("m-3", "orders", otherKey);
        // owner ids are <connector>/task-<index>/<random>
        boolean firstHoldsK = ownerOfK.contains("/task-" + (tasks.size() - 2) + "/");
        OutboxSourceTask holder = firstHoldsK ? first : second;
        OutboxSourceTask other = firstHoldsK ? second : first;
        List<SourceRecord> held = pollUntilSome(holder);
        assertThat(ids(held))
                .as("the owner of k's bucket takes m-1, and nothing else")
                .containsExactly("m-1");
        enqueue("m-2", "orders", "k");
        assertThat(ids(pollUntilSome(other)))
                .as("the other task takes only the message of its own bucket")
                .containsExactly("m-3");
        assertThat(other.poll()).as("m-2 is not the other task's").isNull();
        assertThat(holder.poll()).as("m-2 waits behind m-1, which is not acknowledged").isNull();

        acknowledge(holder, held);
        assertThat(ids(pollUntilSome(holder))).containsExactly("m-2");
    }

    private static List<String> members() {
        return jdbi.withHandle(
                h ->
                        h.createQuery("SELECT member_id FROM outbox_message_members")
                                .mapTo(String.class)
                                .list());
    }

    private static String ownerOf(String key) {
        return jdbi.withHandle(
                h ->
                        h.createQuery("SELECT owner FROM outbox_message_buckets WHERE bucket = :b")
                                .bind("b", io.outbox4j.api.Buckets.of(key))
                                .mapTo(String.class)
                                .one());
    }

    @Test
    void aMessageMappedToAnIllegalTopic_isDeadLettered_andHoldsItsKeyBack() throws Exception {
        enqueue("m-1", "orders", "k");
        enqueue("m-2", "orders/created", "k-bad");
        enqueue("m-3", "orders", "k-bad");
        OutboxSourceTask task = start(Map.of());

        assertThat(ids(pollUntilSome(task)))
                .as("m-3 must not overtake the dead-lettered m-2 of its key")
                .containsExactly("m-1");
        String reason = deadReason("m-2");
        assertThat(reason).contains("'orders/created'").contains("not a legal Kafka topic name");
        assertThat(task.poll()).as("m-3 stays blocked behind the dead letter").isNull();
        assertThat(rows()).isEqualTo(3);
    }

    @Test
    void aMessageClaimedMoreThanMaxAttemptsTimes_isDeadLetteredInsteadOfSentAgain()
            throws Exception {
        enqueue("m-1", "orders", "k");
        Map<String, String> settings =
                Map.of(
                        OutboxSourceConnectorConfig.LEASE_MS, "1000",
                        OutboxSourceConnectorConfig.MAX_ATTEMPTS, "1");
        OutboxSourceTask failing = start(settings);
        pollUntilSome(failing);
        failing.stop(); // as a failed task: the record was never acknowledged
        tasks.remove(failing);
        await("the stopped task's lease ended", () -> leaseEnded("m-1"));

        OutboxSourceTask next = start(settings);
        assertThat(next.poll()).isNull();
        String reason = deadReason("m-1");
        assertThat(reason).contains("claimed 2 times").contains("max.attempts=1");
    }

    @Test
    void topicMappingSettings_chooseTheRecordTopic() throws Exception {
        enqueue("m-1", "orders.created", null);
        OutboxSourceTask task =
                start(
                        Map.of(
                                OutboxSourceConnectorConfig.TOPIC_REGEX, "orders\\.(.*)",
                                OutboxSourceConnectorConfig.TOPIC_REPLACEMENT, "shop-$1",
                                OutboxSourceConnectorConfig.TOPIC_PREFIX, "prod."));
        assertThat(pollUntilSome(task))
                .singleElement()
                .extracting(SourceRecord::topic)
                .isEqualTo("prod.shop-created");
    }
}
