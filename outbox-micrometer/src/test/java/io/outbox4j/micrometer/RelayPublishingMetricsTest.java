package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.engine.Relay;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The publishing gauges of a bound relay follow {@link Relay#publishing()}. */
class RelayPublishingMetricsTest {
    @Test
    void failedCallsAndStall_showWhileTheBrokerRefuses_zeroAfterAPublish() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        store.enqueueCommitted(List.of(Orders.order("m1").key("o-1").build()));
        AtomicBoolean down = new AtomicBoolean(true);
        Publisher broker =
                (messages, timeout) ->
                        messages.stream()
                                .map(
                                        m ->
                                                down.get()
                                                        ? PublishOutcome.failed(
                                                                new RetryableFailureException(
                                                                        "connection refused"))
                                                        : PublishOutcome.published())
                                .toList();
        try (OutboxMetrics metrics = OutboxMetrics.builder(registry).build();
                Relay relay =
                        Relay.builder(store, broker)
                                .backoff(attempt -> Duration.ZERO)
                                .observer(metrics)
                                .build()) {
            metrics.relay(relay);
            assertThat(relay.runOnce().released()).isEqualTo(1);
            assertThat(relay.runOnce().released()).isEqualTo(1);
            assertThat(registry.get(OutboxMetrics.RELAY_PUBLISH_FAILED_CALLS).gauge().value())
                    .isEqualTo(2);
            assertThat(
                            registry.get(OutboxMetrics.RELAY_PUBLISH_STALLED)
                                    .timeGauge()
                                    .value(TimeUnit.MILLISECONDS))
                    .as("stalled since the first failed call, the message waits for its retry")
                    .isGreaterThanOrEqualTo(0)
                    .isEqualTo(
                            (double)
                                    relay.publishing()
                                            .stalledFor(Instant.now())
                                            .orElseThrow()
                                            .toMillis(),
                            offset(1000.0));

            down.set(false);
            assertThat(relay.runOnce().completed()).isEqualTo(1);
            assertThat(registry.get(OutboxMetrics.RELAY_PUBLISH_FAILED_CALLS).gauge().value())
                    .isZero();
            assertThat(
                            registry.get(OutboxMetrics.RELAY_PUBLISH_STALLED)
                                    .timeGauge()
                                    .value(TimeUnit.MILLISECONDS))
                    .isZero();
            assertThat(
                            registry.get(OutboxMetrics.RELAY_OLDEST_CALL_AGE)
                                    .timeGauge()
                                    .value(TimeUnit.MILLISECONDS))
                    .isZero();
        }
    }
}
