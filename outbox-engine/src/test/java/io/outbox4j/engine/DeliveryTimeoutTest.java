package io.outbox4j.engine;

import static io.outbox4j.engine.Fixtures.message;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Observation.Outcome;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Each publisher call is bounded by deliveryTimeout, and no call starts after the batch's safety
 * limit of {@code (ceil(batchSize / workers) + 1) × deliveryTimeout}.
 */
class DeliveryTimeoutTest extends RelayRig {
    @Test
    void aCallOverTheDeliveryTimeout_isCancelled_andItsMessagesFailRetryably() throws Exception {
        memory.enqueueCommitted(Fixtures.messages("m", 2));
        Fixtures.HangingPublisher hanging = new Fixtures.HangingPublisher();
        Relay.Result result;
        long started = System.nanoTime();
        try (Relay relay =
                relayOn(store, hanging)
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

    /**
     * batch 4, workers 1, timeout 10s: no call may start later than (4 + 1) x 10s = 50s after the
     * claim. Four messages of one key need four calls one after the other; each takes 26s by the
     * clock (the leases are renewed meanwhile), so the third would start at +52s: it and the fourth
     * are given back untried.
     */
    @Test
    void noCallStartsAfterTheBatchSafetyLimit_theRestIsGivenBackUntried() {
        enqueue(message("k1", "k"), message("k2", "k"), message("k3", "k"), message("k4", "k"));
        Fixtures.ScriptedPublisher slow =
                Fixtures.ScriptedPublisher.taking(clock, Duration.ofSeconds(26));
        try (Relay relay =
                relayOn(store, slow)
                        .batchSize(4)
                        .workers(1)
                        .deliveryTimeout(Duration.ofSeconds(10))
                        .build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(4, 2, 2, 0, 0, 2));
        }
        assertThat(slow.publishedIdsInOrder()).containsExactly("k1", "k2");
        assertThat(store.extensions).as("the leases were renewed meanwhile").isNotEmpty();
        assertThat(observer.deliveries)
                .extracting(o -> o.messageId() + ":" + o.outcome())
                .containsExactly("k1:COMPLETED", "k2:COMPLETED", "k3:ABANDONED", "k4:ABANDONED");
        assertThat(observer.deliveries.get(2).error())
                .hasValueSatisfying(
                        e ->
                                assertThat(e)
                                        .hasMessageContaining(
                                                "the batch ran for its limit of 50s"));
        assertThat(memory.attempts("k3")).hasValue(0);
    }
}
