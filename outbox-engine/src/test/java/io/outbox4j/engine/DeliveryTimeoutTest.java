package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Each publisher call is bounded by deliveryTimeout. */
class DeliveryTimeoutTest {
    private final MutableClock clock = new MutableClock();
    private final InMemoryOutboxStore memory = new InMemoryOutboxStore(clock);
    private final RecordingStore store = new RecordingStore(memory);
    private final Fixtures.RecordingObserver observer = new Fixtures.RecordingObserver();

    @Test
    void aCallOverTheDeliveryTimeout_isCancelled_andItsMessagesFailRetryably() throws Exception {
        memory.enqueueCommitted(Fixtures.messages("m", 2));
        Fixtures.HangingPublisher hanging = new Fixtures.HangingPublisher();
        Relay.Result result;
        long started = System.nanoTime();
        try (Relay relay =
                Relay.builder(store, hanging)
                        .clock(clock)
                        .observer(observer)
                        .workers(1)
                        .deliveryTimeout(Duration.ofMillis(200))
                        .backoff(attempt -> Duration.ofMinutes(1))
                        .build()) {
            result = relay.runOnce();
        }
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(tookMillis)
                .as("bounded by the 200ms timeout, not the 30s publisher")
                .isLessThan(3_000);
        assertThat(result).isEqualTo(new Relay.Result(2, 0, 0, 2, 0, 0));
        Fixtures.await(
                "the hanging call is interrupted", Duration.ofSeconds(5), hanging.interrupted::get);
        assertThat(observer.deliveries)
                .hasSize(2)
                .allSatisfy(
                        o -> {
                            assertThat(o.outcome()).isEqualTo(Outcome.RELEASED);
                            assertThat(o.error())
                                    .hasValueSatisfying(
                                            e ->
                                                    assertThat(e)
                                                            .isInstanceOf(TimeoutException.class)
                                                            .hasMessage(
                                                                    "publish did not finish within 200ms"));
                            assertThat(o.duration()).isGreaterThanOrEqualTo(Duration.ofMillis(200));
                        });
        assertThat(store.releases)
                .allSatisfy(
                        r ->
                                assertThat(r.availableAt())
                                        .as("a timeout is a retryable failure: backoff applies")
                                        .isAfterOrEqualTo(clock.instant().plusSeconds(60)));
    }
}
