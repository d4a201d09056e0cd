package io.outbox4j.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.micrometer.OutboxMetrics;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * /metrics serves outbox-micrometer's meters under their Prometheus names ({@code outbox_*}), the
 * names the shipped Grafana dashboard and alerts (docs/) use.
 */
class RelayMetricsTest {
    private static final Instant NOW = Instant.parse("2026-12-03T10:00:00Z");
    private final Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);

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
    void observations_areCountedPerTopicAndOutcome_withTheEnqueueToCompleteLatency() {
        try (RelayMetrics m =
                new RelayMetrics(new InMemoryOutboxStore(), false, Duration.ZERO, clock)) {
            OutboxMetrics b = m.binder();
            b.onDelivery(observation("orders", Outcome.COMPLETED, Duration.ofMillis(40)));
            b.onDelivery(observation("orders", Outcome.COMPLETED, Duration.ofSeconds(3)));
            b.onDelivery(observation("orders", Outcome.RELEASED, Duration.ofSeconds(1)));
            b.onDelivery(observation("pay\"ments", Outcome.DEAD_LETTERED, Duration.ofSeconds(1)));
            b.onDelivery(observation("orders", Outcome.ABANDONED, Duration.ofSeconds(1)));
            b.onStoreError(new IllegalStateException("connection refused"));

            String text = m.render();

            assertThat(text)
                    .contains("# TYPE outbox_deliveries_total counter\n")
                    .containsPattern(
                            "outbox_deliveries_total\\{outcome=\"completed\",topic=\"orders\"} 2")
                    .containsPattern(
                            "outbox_deliveries_total\\{outcome=\"released\",topic=\"orders\"} 1")
                    .containsPattern(
                            "outbox_deliveries_total\\{outcome=\"abandoned\",topic=\"orders\"} 1")
                    .containsPattern(
                            "outbox_deliveries_total\\{outcome=\"dead_lettered\",topic=\"pay\\\\\"ments\"} 1")
                    .containsPattern(
                            "outbox_store_errors_total\\{exception=\"IllegalStateException\"} 1")
                    .containsPattern("outbox_delivery_latency_seconds_count\\{topic=\"orders\"} 2")
                    .containsPattern("outbox_delivery_latency_seconds_sum\\{topic=\"orders\"} 3.04")
                    .doesNotContain("outbox4j_relay_");
            assertThat(m.count(Outcome.COMPLETED)).isEqualTo(2);
            assertThat(m.count(Outcome.DEAD_LETTERED)).isEqualTo(1);
        }
    }

    @Test
    void storeStatistics_giveCountsByTopicAndState_theOldestReadyAgeAndBlockedKeys() {
        InMemoryOutboxStore store = new InMemoryOutboxStore(clock);
        store.enqueueCommitted(
                List.of(
                        message("a", "orders", null),
                        message("b", "orders", null),
                        message("c", "payments", NOW.plusSeconds(60))));
        try (RelayMetrics m = new RelayMetrics(store, true, Duration.ofSeconds(1), clock)) {
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(
                            () ->
                                    assertThat(m.render())
                                            .containsPattern(
                                                    "outbox_messages\\{state=\"ready\",topic=\"orders\"} 2")
                                            .containsPattern(
                                                    "outbox_messages\\{state=\"delayed\",topic=\"payments\"} 1")
                                            .contains("outbox_blocked_keys 0")
                                            .containsPattern(
                                                    "outbox_oldest_ready_age_seconds\\{topic=\"orders\"} [0-9.]+"));
        }
    }

    @Test
    void withoutStoreStatistics_noBacklogGaugeIsServed() {
        try (RelayMetrics m =
                new RelayMetrics(new InMemoryOutboxStore(), false, Duration.ofSeconds(1), clock)) {
            assertThat(m.render()).doesNotContain("outbox_messages").doesNotContain("blocked_keys");
        }
    }

    @Test
    void aMemberRelaysStateBucketsMembersAndHandovers_areServed() {
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        try (RelayMetrics m = new RelayMetrics(store, false, Duration.ZERO, Clock.systemUTC());
                Relay relay =
                        Relay.builder(m.binder().store(store), Publisher.perMessage(message -> {}))
                                .owner("relay-a")
                                .observer(m.binder())
                                .pollInterval(Duration.ofMillis(20))
                                .build()) {
            m.binder().relay(relay);
            relay.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> relay.membership().isPresent());
            assertThat(m.render())
                    .containsPattern("outbox_relay_state\\{state=\"running\"} 1")
                    .contains("outbox_relay_buckets 256")
                    .contains("outbox_relay_members 1")
                    .contains("outbox_relay_handovers_total " + relay.handovers())
                    .contains("outbox_relay_publish_failed_calls 0");
        }
    }

    private static Message message(String id, String topic, Instant notBefore) {
        Message.Builder b = Message.builder().id(id).module("shop").topic(topic).payload("{}");
        return notBefore == null ? b.build() : b.notBefore(notBefore).build();
    }
}
