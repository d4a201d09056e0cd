package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Message;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Release;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * What the relay logs through slf4j (captured by the tests' own binding, {@link CapturedLogs}):
 * start and stop, publish failures summarised per topic and rate-limited, each dead letter, store
 * failures with the driver's message; never a payload or a header value. Each test uses its own
 * relay owner and reads only the lines that name it.
 */
class RelayLoggingTest extends RelayRig {
    private static List<CapturedLogs.Event> lines(String logger, String owner) {
        return CapturedLogs.of(logger, "relay '" + owner + "'");
    }

    private static Message message(String id, String topic, String key) {
        Message.Builder b =
                Message.builder()
                        .id(id)
                        .topic(topic)
                        .module("shop")
                        .payload("secret-payload-" + id)
                        .header("authorization", "secret-header-" + id);
        if (key != null) {
            b.key(key);
        }
        return b.build();
    }

    @Test
    void startAndStop_areLoggedAtInfo_withOwnerBatchWorkersAndLease() {
        Relay relay =
                Relay.builder(store, Fixtures.ScriptedPublisher.accepting())
                        .owner("log-lifecycle")
                        .batchSize(50)
                        .workers(2)
                        .build();
        relay.start();
        relay.close();
        assertThat(lines("io.outbox4j.engine.Relay", "log-lifecycle"))
                .extracting(CapturedLogs.Event::level, CapturedLogs.Event::message)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(
                                Level.INFO,
                                "relay 'log-lifecycle' started: batch 16 to 50, in flight up"
                                        + " to 100, workers 2, lease 15s (renewed every 5s),"
                                        + " delivery timeout 30s, poll interval 1s, wake-up window"
                                        + " 4ms, max attempts 8"),
                        org.assertj.core.groups.Tuple.tuple(
                                Level.INFO,
                                "relay 'log-lifecycle' stopped: batch 50, workers 2, lease 15s;"
                                        + " published 0, dead-lettered 0 since start"));
    }

    @Test
    void publishFailures_areSummarisedPerTopic_atMostOncePerInterval() {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            messages.add(message("o" + i, "orders", null));
        }
        messages.add(message("p0", "payments", null));
        memory.enqueueCommitted(messages);
        Fixtures.ScriptedPublisher down =
                new Fixtures.ScriptedPublisher(
                        m ->
                                PublishOutcome.failed(
                                        new IllegalStateException("broker unavailable")));
        try (Relay relay =
                Relay.builder(store, down)
                        .owner("log-failures")
                        .clock(clock)
                        .batchSize(10)
                        .maxAttempts(100)
                        .backoff(Backoff.fixed(Duration.ofSeconds(1)))
                        .build()) {
            relay.runOnce(); // +0s: first failure of each topic logged at once, 4 more counted
            clock.advance(Duration.ofSeconds(10));
            relay.runOnce(); // +10s: within the interval, only counted
            clock.advance(Duration.ofSeconds(31));
            relay.runOnce(); // +41s: the interval has passed, one line per topic
        } // close: what is still counted is logged
        List<String> orders =
                lines("io.outbox4j.engine.publish", "log-failures").stream()
                        .filter(e -> e.level() == Level.WARN)
                        .map(CapturedLogs.Event::message)
                        .filter(m -> m.contains("topic 'orders'"))
                        .toList();
        assertThat(orders).as("15 failures of one topic in 3 lines").hasSize(3);
        assertThat(orders.get(0))
                .startsWith("relay 'log-failures': publish to topic 'orders' failed once (1 since")
                .contains(
                        "last error: java.lang.IllegalStateException: broker unavailable",
                        "next retry in 1",
                        "s (2030-01-01T00:00:01");
        assertThat(orders.get(1))
                .contains("failed 10 times in the last 41s (11 since start)", "next retry in ");
        assertThat(orders.get(2)).contains("failed 4 times", "(15 since start)");
        assertThat(lines("io.outbox4j.engine.publish", "log-failures"))
                .filteredOn(e -> e.message().contains("topic 'payments'"))
                .extracting(CapturedLogs.Event::message)
                .hasSize(2)
                .last()
                .satisfies(
                        m ->
                                assertThat(m)
                                        .contains(
                                                "failed 2 times in the last 41s (3 since start)"));
    }

    @Test
    void eachDeadLetter_isLoggedAtWarn_withIdTopicKeyAttemptAndReason() {
        memory.enqueueCommitted(List.of(message("order-42", "orders", "customer-7")));
        Fixtures.ScriptedPublisher poison =
                new Fixtures.ScriptedPublisher(
                        m ->
                                PublishOutcome.failed(
                                        new PermanentFailureException("schema rejected")));
        try (Relay relay = Relay.builder(store, poison).owner("log-dead").clock(clock).build()) {
            relay.runOnce();
        }
        assertThat(lines("io.outbox4j.engine.deadletter", "log-dead"))
                .singleElement()
                .satisfies(
                        e -> {
                            assertThat(e.level()).isEqualTo(Level.WARN);
                            assertThat(e.message())
                                    .isEqualTo(
                                            "relay 'log-dead' dead-lettered message order-42"
                                                    + " (topic 'orders', key 'customer-7', attempt"
                                                    + " 1): permanent failure:"
                                                    + " io.outbox4j.api.PermanentFailureException:"
                                                    + " schema rejected");
                        });
    }

    @Test
    void storeFailures_areLoggedWithTheDriversOwnMessage_onceForEachKindPerBatch() {
        RecordingStore failingRelease =
                new RecordingStore(memory) {
                    @Override
                    public boolean release(Release release) {
                        throw new IllegalStateException(
                                "release failed",
                                new SQLException(
                                        "FATAL: terminating connection due to administrator"
                                                + " command",
                                        "57P01"));
                    }
                };
        memory.enqueueCommitted(
                List.of(message("a", "orders", null), message("b", "orders", null)));
        Fixtures.ScriptedPublisher nack =
                new Fixtures.ScriptedPublisher(
                        m -> PublishOutcome.failed(new IllegalStateException("nack")));
        try (Relay relay =
                Relay.builder(failingRelease, nack).owner("log-store").clock(clock).build()) {
            relay.runOnce();
        }
        assertThat(lines("io.outbox4j.engine.store", "log-store"))
                .filteredOn(e -> e.level() == Level.WARN)
                .extracting(CapturedLogs.Event::message)
                .containsExactly(
                        "relay 'log-store': store failed to release a failed message:"
                                + " java.lang.IllegalStateException: release failed (cause:"
                                + " java.sql.SQLException: FATAL: terminating connection due to"
                                + " administrator command)",
                        "relay 'log-store': store failed to release a failed message 1 more"
                                + " times in this batch");
    }

    @Test
    void noLogLine_everCarriesAPayloadOrAHeaderValue() {
        memory.enqueueCommitted(
                List.of(
                        message("s1", "orders", "k"),
                        message("s2", "orders", "k"),
                        message("s3", "orders", null)));
        Fixtures.ScriptedPublisher mixed =
                new Fixtures.ScriptedPublisher(
                        m ->
                                switch (m.id()) {
                                    case "s1" ->
                                            PublishOutcome.failed(
                                                    new IllegalStateException("nack"));
                                    case "s3" ->
                                            PublishOutcome.failed(
                                                    new PermanentFailureException("rejected"));
                                    default -> PublishOutcome.published();
                                });
        Relay relay = Relay.builder(store, mixed).owner("log-secrets").clock(clock).build();
        relay.start();
        Fixtures.await("a batch ran", Duration.ofSeconds(5), () -> !store.releases.isEmpty());
        relay.close();
        assertThat(CapturedLogs.containing("log-secrets")).hasSizeGreaterThanOrEqualTo(4);
        assertThat(CapturedLogs.EVENTS)
                .allSatisfy(
                        e ->
                                assertThat(e.message())
                                        .doesNotContain("secret-payload", "secret-header"));
    }
}
