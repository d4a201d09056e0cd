package io.outbox4j.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.PostgresServer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.source.SourceRecord;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * Adaptive polling (docs/engine.md): a task that no wake-up reaches (the writer sends no signal, as
 * on MariaDB, MySQL and H2) claims again within milliseconds after a claim that found messages, and
 * backs off to its poll interval while it finds none.
 */
class OutboxSourceTaskAdaptivePollingTest {

    @Test
    void nextIdleWait_isShortAfterAClaimThatFound_andDoublesUpToThePollInterval() {
        Duration poll = Duration.ofMillis(100);
        Duration w = OutboxSourceTask.nextIdleWait(poll, poll, true);
        assertThat(w).isEqualTo(Duration.ofMillis(10));
        w = OutboxSourceTask.nextIdleWait(w, poll, false);
        assertThat(w).isEqualTo(Duration.ofMillis(20));
        w = OutboxSourceTask.nextIdleWait(w, poll, false);
        w = OutboxSourceTask.nextIdleWait(w, poll, false);
        assertThat(w).isEqualTo(Duration.ofMillis(80));
        w = OutboxSourceTask.nextIdleWait(w, poll, false);
        assertThat(w).as("capped at the poll interval").isEqualTo(poll);
        assertThat(OutboxSourceTask.nextIdleWait(w, poll, false)).isEqualTo(poll);
        assertThat(OutboxSourceTask.nextIdleWait(poll, Duration.ofMillis(5), true))
                .as("a poll interval shorter than the first idle wait wins")
                .isEqualTo(Duration.ofMillis(5));
    }

    @Test
    void withoutWakeUps_aCommitSoonAfterARecord_isPolledWithinMilliseconds_notAPollInterval()
            throws Exception {
        PostgresServer pg = PostgresServer.shared();
        String url = pg.createDatabase("outbox_connect_adaptive");
        Jdbi jdbi = Jdbi.create(url, pg.user(), pg.password());
        // The writer sends no cross-process signal: only the task's polling finds its commits.
        JdbiOutboxStore writer = JdbiOutboxStore.builder(jdbi).signalCommits(false).build();
        writer.createSchemaIfAbsent();
        Map<String, String> props = new HashMap<>();
        props.put("name", "adaptive-test");
        props.put(OutboxSourceConnectorConfig.JDBC_URL, url);
        props.put(OutboxSourceConnectorConfig.JDBC_USER, pg.user());
        props.put(OutboxSourceConnectorConfig.JDBC_PASSWORD, pg.password());
        props.put(OutboxSourceConnectorConfig.COMPLETION_INTERVAL_MS, "50");
        props.put(OutboxSourceConnectorConfig.POLL_INTERVAL_MS, "3000");
        props.put(OutboxSourceTask.TASK_INDEX, "0");
        OutboxSourceTask task = new OutboxSourceTask();
        task.start(props);
        BlockingQueue<SourceRecord> polled = new LinkedBlockingQueue<>();
        Thread poller = new Thread(() -> pollForever(task, polled), "connect-poller");
        poller.start();
        try {
            enqueue(jdbi, writer, "a1");
            SourceRecord first = polled.poll(10, TimeUnit.SECONDS);
            assertThat(first).as("a1 polled").isNotNull();
            task.commitRecord(
                    first, new RecordMetadata(new TopicPartition(first.topic(), 0), 0, 0, 0, 0, 0));
            // a1's completion ends one idle wait of the task (it may unblock keys); the writer
            // commits a2 300 ms after it, when nothing but the task's own polling can find a2
            // (the task's idle waits since the claim that found a1: 10, 20, 40 ... ms; without
            // adaptive polling it would wait its 3 s interval)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (rows(jdbi) > 0) {
                assertThat(System.nanoTime()).as("a1 completed in time").isLessThan(deadline);
                Thread.onSpinWait();
            }
            Thread.sleep(300); // the writer's pace, not a wait for a condition
            long committed = System.nanoTime();
            enqueue(jdbi, writer, "a2");
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
            task.stop();
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

    private static int rows(Jdbi jdbi) {
        return jdbi.withHandle(
                h ->
                        h.createQuery("SELECT count(*) FROM outbox_message")
                                .mapTo(Integer.class)
                                .one());
    }

    private static void enqueue(Jdbi jdbi, JdbiOutboxStore store, String id) {
        jdbi.useTransaction(
                h ->
                        store.enqueue(
                                h,
                                Message.builder()
                                        .id(id)
                                        .topic("orders")
                                        .key("k-" + id)
                                        .module("test")
                                        .payload("payload of " + id)
                                        .build()));
    }
}
