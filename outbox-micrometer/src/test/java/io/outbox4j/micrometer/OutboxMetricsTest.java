package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox4j.api.Backoff;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.engine.Relay;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The meters after a real relay run (engine, reference store, a publisher that fails some
 * messages), read from a {@link SimpleMeterRegistry}.
 */
class OutboxMetricsTest {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    private final MutableClock clock = new MutableClock(T0);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void relayRun_countsOutcomesTimesPublishesAndLatency_andGaugesReadTheBacklog() {
        InMemoryOutboxStore store = new FlakyClaimStore(clock);
        store.enqueueCommitted(
                List.of(
                        message("o1", "orders", null),
                        message("o2", "orders", null),
                        message("o3", "orders", null),
                        message("o4-retry", "orders", null),
                        message("p1-reject", "payments", "acct-1"),
                        message("p2", "payments", "acct-1")));
        Publisher publisher =
                Publisher.perMessage(
                        m -> {
                            if (m.id().equals("o4-retry")) {
                                throw new RetryableFailureException("broker busy");
                            }
                            if (m.id().equals("p1-reject")) {
                                throw new PermanentFailureException("schema rejected");
                            }
                        });
        try (OutboxMetrics metrics =
                        OutboxMetrics.builder(registry)
                                .admin(store)
                                .clock(clock)
                                .statisticsInterval(Duration.ZERO)
                                .tags(Tags.of("outbox", "main"))
                                .build();
                Relay relay =
                        Relay.builder(store, publisher)
                                .owner("metrics-test")
                                .clock(clock)
                                .backoff(Backoff.fixed(Duration.ofMinutes(10)))
                                .observer(metrics)
                                .build()) {
            clock.set(T0.plusSeconds(2)); // the relay runs 2 s after the commit
            assertThatThrownBy(relay::runOnce).hasMessageContaining("database unreachable");
            Relay.Result result = relay.runOnce();
            assertThat(result.claimed()).isEqualTo(6);

            assertThat(counter(OutboxMetrics.STORE_ERRORS, "exception", "IllegalStateException"))
                    .isEqualTo(1);
            assertThat(deliveries("orders", "completed")).isEqualTo(3);
            assertThat(deliveries("orders", "released")).isEqualTo(1);
            assertThat(deliveries("payments", "dead_lettered")).isEqualTo(1);
            assertThat(deliveries("payments", "abandoned")).isEqualTo(1);
            assertThat(deliveries("payments", "completed")).isZero();

            assertThat(timer(OutboxMetrics.PUBLISH, "orders", "result", "published").count())
                    .isEqualTo(3);
            assertThat(timer(OutboxMetrics.PUBLISH, "orders", "result", "failed").count())
                    .isEqualTo(1);
            assertThat(timer(OutboxMetrics.PUBLISH, "payments", "result", "failed").count())
                    .as("the abandoned p2 was never handed to the publisher: not timed")
                    .isEqualTo(1);

            Timer latency = registry.get(OutboxMetrics.LATENCY).tag("topic", "orders").timer();
            assertThat(latency.count()).isEqualTo(3);
            assertThat(latency.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(6000);
            assertThat(bucket(latency, Duration.ofSeconds(1))).isZero();
            assertThat(bucket(latency, Duration.ofMillis(2500))).isEqualTo(3);

            // statistics, 92 s after the enqueue: o4 waits 10 min for its retry, p2 is ready but
            // blocked behind the dead letter of its key
            clock.set(T0.plusSeconds(92));
            metrics.refresh();
            assertThat(messages("orders", "ready")).isZero();
            assertThat(messages("orders", "delayed")).isEqualTo(1);
            assertThat(messages("payments", "ready")).isEqualTo(1);
            assertThat(messages("payments", "dead")).isEqualTo(1);
            assertThat(messages("payments", "leased")).isZero();
            assertThat(oldestReadyAgeSeconds("payments")).isEqualTo(92);
            assertThat(oldestReadyAgeSeconds("orders")).isZero();
            assertThat(registry.get(OutboxMetrics.BLOCKED_KEYS).gauge().value()).isEqualTo(1);
            assertThat(registry.getMeters())
                    .as("every meter carries the common tag")
                    .allSatisfy(m -> assertThat(m.getId().getTag("outbox")).isEqualTo("main"));
            assertThat(registry.getMeters())
                    .as("no meter is tagged with a message id or key")
                    .noneMatch(
                            m ->
                                    m.getId().getTags().stream()
                                            .anyMatch(
                                                    t ->
                                                            t.getValue().startsWith("o1")
                                                                    || t.getValue()
                                                                            .startsWith("acct")));

            // after the dead letter is discarded the key is free and p2 goes out
            store.discard(List.of("p1-reject"));
            relay.runOnce();
            metrics.refresh();
            assertThat(deliveries("payments", "completed")).isEqualTo(1);
            assertThat(messages("payments", "dead")).isZero();
            assertThat(messages("payments", "ready")).isZero();
            assertThat(oldestReadyAgeSeconds("payments")).isZero();
            assertThat(registry.get(OutboxMetrics.BLOCKED_KEYS).gauge().value()).isZero();

            metrics.close();
            assertThat(registry.getMeters()).as("meters left after close").isEmpty();
        }
    }

    @Test
    void topicsPastTheCap_shareTheOtherTag() {
        try (OutboxMetrics metrics = OutboxMetrics.builder(registry).maxTopics(2).build()) {
            for (String topic : List.of("a", "b", "c", "d", "a")) {
                metrics.onDelivery(observation(topic, Observation.Outcome.COMPLETED));
            }
            assertThat(deliveries("a", "completed")).isEqualTo(2);
            assertThat(deliveries("b", "completed")).isEqualTo(1);
            assertThat(deliveries(OutboxMetrics.OTHER_TOPICS, "completed")).isEqualTo(2);
            assertThat(registry.find(OutboxMetrics.DELIVERIES).tag("topic", "c").counters())
                    .isEmpty();
        }
    }

    @Test
    void statisticsAreReadOnTheSchedule_andAFailedReadIsCountedNotThrown() throws Exception {
        AtomicBoolean fail = new AtomicBoolean(true);
        AtomicInteger reads = new AtomicInteger();
        Set<Thread> readers = ConcurrentHashMap.newKeySet();
        InMemoryOutboxStore store =
                new InMemoryOutboxStore(clock) {
                    @Override
                    public OutboxStatistics statistics(Instant now) {
                        readers.add(Thread.currentThread());
                        reads.incrementAndGet();
                        if (fail.getAndSet(false)) {
                            throw new IllegalStateException("statistics query timed out");
                        }
                        return super.statistics(now);
                    }
                };
        store.enqueueCommitted(List.of(message("x1", "orders", null)));
        OutboxMetrics metrics =
                OutboxMetrics.builder(registry)
                        .admin(store)
                        .clock(clock)
                        .statisticsInterval(Duration.ofSeconds(1))
                        .build();
        Awaitility.await("the statistics gauges, after the second scheduled read")
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> !registry.find(OutboxMetrics.MESSAGES).gauges().isEmpty());
        assertThat(registry.get(OutboxMetrics.STATISTICS_ERRORS).counter().count()).isEqualTo(1);
        assertThat(messages("orders", "ready"))
                .as("the second scheduled read, 1 s after the failed first")
                .isEqualTo(1);

        metrics.close();
        int readsAtClose = reads.get();
        // the threads that read the statistics end with close (no waiting out an interval to see
        // that no read comes)
        for (Thread reader : readers) {
            reader.join(5_000);
            assertThat(reader.isAlive())
                    .as("%s, which read the statistics, still runs after close", reader)
                    .isFalse();
        }
        assertThat(reads.get()).as("statistics reads after close").isEqualTo(readsAtClose);
    }

    @Test
    void builder_refusesBadSettings() {
        assertThatThrownBy(() -> OutboxMetrics.builder(registry).maxTopics(0))
                .hasMessage("maxTopics must be >= 1, but was 0");
        assertThatThrownBy(
                        () ->
                                OutboxMetrics.builder(registry)
                                        .statisticsInterval(Duration.ofMillis(10)))
                .hasMessage("statisticsInterval must be zero or at least 1s, but was PT0.01S");
        assertThatThrownBy(() -> OutboxMetrics.builder(registry).tags(Tags.of("topic", "x")))
                .hasMessage("tag key 'topic' is set by OutboxMetrics itself");
    }

    // ---------------------------------------------------------------------------------------

    private double deliveries(String topic, String outcome) {
        Counter c =
                registry.find(OutboxMetrics.DELIVERIES)
                        .tag("topic", topic)
                        .tag("outcome", outcome)
                        .counter();
        return c == null ? 0 : c.count();
    }

    private double counter(String name, String tag, String value) {
        return registry.get(name).tag(tag, value).counter().count();
    }

    private Timer timer(String name, String topic, String tag, String value) {
        return registry.get(name).tag("topic", topic).tag(tag, value).timer();
    }

    private double messages(String topic, String state) {
        return registry.get(OutboxMetrics.MESSAGES)
                .tag("topic", topic)
                .tag("state", state)
                .gauge()
                .value();
    }

    private double oldestReadyAgeSeconds(String topic) {
        TimeGauge g = registry.get(OutboxMetrics.OLDEST_READY_AGE).tag("topic", topic).timeGauge();
        return g.value(TimeUnit.SECONDS);
    }

    private static double bucket(Timer timer, Duration upperBound) {
        for (CountAtBucket b : timer.takeSnapshot().histogramCounts()) {
            if ((long) b.bucket(TimeUnit.NANOSECONDS) == upperBound.toNanos()) {
                return b.count();
            }
        }
        throw new AssertionError("no bucket " + upperBound + " in " + timer.takeSnapshot());
    }

    private static Message message(String id, String topic, String key) {
        return Orders.order(id).topic(topic).key(key).occurredAt(T0).build();
    }

    private static Observation observation(String topic, Observation.Outcome outcome) {
        return new Observation(
                "id-1",
                Optional.empty(),
                topic,
                "shop",
                T0,
                1,
                Duration.ofMillis(3),
                outcome,
                Optional.empty(),
                false);
    }

    /** A store whose first claim fails, like a database that is briefly unreachable. */
    private static final class FlakyClaimStore extends InMemoryOutboxStore {
        private final AtomicBoolean failed = new AtomicBoolean();

        FlakyClaimStore(Clock clock) {
            super(clock);
        }

        @Override
        public List<Delivery> claim(ClaimRequest request) {
            if (failed.compareAndSet(false, true)) {
                throw new IllegalStateException("database unreachable");
            }
            return super.claim(request);
        }
    }

    /** A clock the test moves by hand. */
    static final class MutableClock extends Clock {
        private volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void set(Instant instant) {
            now = instant;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
