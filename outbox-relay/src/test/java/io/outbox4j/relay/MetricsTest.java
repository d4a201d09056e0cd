package io.outbox4j.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Prometheus exposition of the relay's observations and the store's statistics. */
class MetricsTest {
    private static final Instant NOW = Instant.parse("2026-12-03T10:00:00Z");
    private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    private final ExecutorService storeThread = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        storeThread.shutdownNow();
    }

    private static Observation observation(String topic, Outcome outcome, Duration age) {
        return new Observation(
                "m-" + System.nanoTime(),
                Optional.of("k"),
                topic,
                "shop",
                NOW.minus(age),
                1,
                outcome == Outcome.ABANDONED ? Duration.ZERO : Duration.ofMillis(20),
                outcome,
                Optional.empty(),
                false);
    }

    @Test
    void aMemberRelaysBucketsMembersAndHandovers_areExposed() throws InterruptedException {
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        Metrics m =
                new Metrics(clock, store, false, Duration.ofSeconds(15), storeThread, () -> true);
        try (Relay relay =
                Relay.builder(store, Publisher.perMessage(message -> {}))
                        .owner("relay-a")
                        .pollInterval(Duration.ofMillis(20))
                        .build()) {
            m.relay(relay);
            relay.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (relay.membership().isEmpty() && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            assertThat(relay.membership()).as("the relay joined").isPresent();

            assertThat(m.render())
                    .contains("# TYPE outbox4j_relay_buckets gauge\n")
                    .contains("outbox4j_relay_buckets 256\n")
                    .contains("outbox4j_relay_members 1\n")
                    .contains("# TYPE outbox4j_relay_handovers_total counter\n")
                    .contains("outbox4j_relay_handovers_total " + relay.handovers() + "\n");
            assertThat(relay.handovers()).as("its first renewal took every bucket").isEqualTo(256);
        }
    }

    @Test
    void observations_areCountedPerTopicAndOutcome_withTheEnqueueToCompleteHistogram() {
        Metrics m =
                new Metrics(
                        clock,
                        new InMemoryOutboxStore(),
                        false,
                        Duration.ofSeconds(15),
                        storeThread,
                        () -> true);
        m.onDelivery(observation("orders", Outcome.COMPLETED, Duration.ofMillis(40)));
        m.onDelivery(observation("orders", Outcome.COMPLETED, Duration.ofSeconds(3)));
        m.onDelivery(observation("orders", Outcome.RELEASED, Duration.ofSeconds(1)));
        m.onDelivery(observation("pay\"ments", Outcome.DEAD_LETTERED, Duration.ofSeconds(1)));
        m.onDelivery(observation("orders", Outcome.ABANDONED, Duration.ofSeconds(1)));
        m.onStoreError(new RuntimeException("connection refused"));

        String text = m.render();

        assertThat(text)
                .contains("outbox4j_relay_running 1\n")
                .contains("# TYPE outbox4j_relay_messages_total counter\n")
                .contains(
                        "outbox4j_relay_messages_total{topic=\"orders\",outcome=\"completed\"} 2\n")
                .contains(
                        "outbox4j_relay_messages_total{topic=\"orders\",outcome=\"released\"} 1\n")
                .contains(
                        "outbox4j_relay_messages_total{topic=\"orders\",outcome=\"abandoned\"} 1\n")
                .contains(
                        "outbox4j_relay_messages_total{topic=\"pay\\\"ments\",outcome=\"dead_lettered\"} 1\n")
                .contains("outbox4j_relay_store_errors_total 1\n")
                .contains("outbox4j_relay_publish_seconds_count 4\n")
                .contains("outbox4j_relay_enqueue_to_complete_seconds_bucket{le=\"0.025\"} 0\n")
                .contains("outbox4j_relay_enqueue_to_complete_seconds_bucket{le=\"0.05\"} 1\n")
                .contains("outbox4j_relay_enqueue_to_complete_seconds_bucket{le=\"2.5\"} 1\n")
                .contains("outbox4j_relay_enqueue_to_complete_seconds_bucket{le=\"5.0\"} 2\n")
                .contains("outbox4j_relay_enqueue_to_complete_seconds_bucket{le=\"+Inf\"} 2\n")
                .contains("outbox4j_relay_enqueue_to_complete_seconds_sum 3.04\n")
                .contains("outbox4j_relay_enqueue_to_complete_seconds_count 2\n")
                .doesNotContain("outbox4j_outbox_");
        assertThat(m.count("completed")).isEqualTo(2);
        for (String line : text.split("\n")) {
            assertThat(line)
                    .as("every line is a comment or 'name{labels} value'")
                    .matches("# (HELP|TYPE) .*|[a-z_0-9]+(\\{.*\\})? -?[0-9.E+-]+");
        }
    }

    @Test
    void storeStatistics_giveCountsByStateTotalAndPerTopic() {
        InMemoryOutboxStore store = new InMemoryOutboxStore(clock);
        store.enqueueCommitted(
                List.of(
                        Message.builder()
                                .id("a")
                                .module("shop")
                                .topic("orders")
                                .payload("{}")
                                .build(),
                        Message.builder()
                                .id("b")
                                .module("shop")
                                .topic("orders")
                                .payload("{}")
                                .build(),
                        Message.builder()
                                .id("c")
                                .module("shop")
                                .topic("payments")
                                .payload("{}")
                                .notBefore(NOW.plusSeconds(60))
                                .build()));
        Metrics m =
                new Metrics(clock, store, true, Duration.ofSeconds(15), storeThread, () -> false);

        String text = m.render();

        assertThat(text)
                .contains("outbox4j_relay_running 0\n")
                .contains("outbox4j_outbox_statistics_up 1\n")
                .contains("outbox4j_outbox_messages{state=\"ready\"} 2\n")
                .contains("outbox4j_outbox_messages{state=\"delayed\"} 1\n")
                .contains("outbox4j_outbox_messages{state=\"leased\"} 0\n")
                .contains("outbox4j_outbox_messages{state=\"dead\"} 0\n")
                .contains("outbox4j_outbox_topic_messages{topic=\"orders\",state=\"ready\"} 2\n")
                .contains(
                        "outbox4j_outbox_topic_messages{topic=\"payments\",state=\"delayed\"} 1\n")
                .contains("outbox4j_outbox_blocked_keys 0\n")
                .containsPattern("outbox4j_outbox_oldest_ready_age_seconds [0-9.]+\n");
    }

    /** An admin that counts statistics calls and can be made to fail. */
    private static final class CountingAdmin implements OutboxAdmin {
        final InMemoryOutboxStore store = new InMemoryOutboxStore();
        final AtomicInteger calls = new AtomicInteger();
        volatile boolean failing;

        @Override
        public OutboxStatistics statistics(Instant now) {
            calls.incrementAndGet();
            if (failing) {
                throw new IllegalStateException("connection refused");
            }
            return store.statistics(now);
        }

        @Override
        public DeadLetterPage deadLetters(DeadLetterQuery query) {
            return store.deadLetters(query);
        }

        @Override
        public int replay(List<String> ids, Instant now) {
            return 0;
        }

        @Override
        public int replayAll(DeadLetterQuery filter, Instant now) {
            return 0;
        }

        @Override
        public int discard(List<String> ids) {
            return 0;
        }

        @Override
        public int discardAll(DeadLetterQuery filter) {
            return 0;
        }

        @Override
        public Optional<String> lastError(String id) {
            return Optional.empty();
        }
    }

    @Test
    void storeStatistics_areReadOncePerInterval_andAFailureIsReportedAsDown() {
        CountingAdmin admin = new CountingAdmin();
        Instant[] now = {NOW};
        Clock moving =
                new Clock() {
                    @Override
                    public java.time.ZoneId getZone() {
                        return ZoneOffset.UTC;
                    }

                    @Override
                    public Clock withZone(java.time.ZoneId zone) {
                        return this;
                    }

                    @Override
                    public Instant instant() {
                        return now[0];
                    }
                };
        Metrics m =
                new Metrics(moving, admin, true, Duration.ofSeconds(15), storeThread, () -> true);

        m.render();
        now[0] = NOW.plusSeconds(10);
        m.render();
        assertThat(admin.calls).hasValue(1);

        admin.failing = true;
        now[0] = NOW.plusSeconds(16);
        String text = m.render();
        assertThat(admin.calls).hasValue(2);
        assertThat(text)
                .contains("outbox4j_outbox_statistics_up 0\n")
                .doesNotContain("outbox4j_outbox_messages{");
    }
}
