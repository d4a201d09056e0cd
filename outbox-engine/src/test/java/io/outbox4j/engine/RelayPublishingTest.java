package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link Relay#publishing()}: a broker that fails every call stalls publishing even with one
 * message that waits for its retry between tries; a success, or a last try that ends in a dead
 * letter, ends it.
 */
class RelayPublishingTest {
    private static final Duration LIMIT = Duration.ofMinutes(1);
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    private final InMemoryOutboxStore store = new InMemoryOutboxStore();
    private final MutableClock clock = new MutableClock(T0);
    private final AtomicReference<Function<io.outbox4j.api.Message, PublishOutcome>> broker =
            new AtomicReference<>(m -> down());

    private static PublishOutcome down() {
        return PublishOutcome.failed(new RetryableFailureException("connection refused"));
    }

    private Relay relay(int maxAttempts) {
        return Relay.builder(store, new Fixtures.ScriptedPublisher(m -> broker.get().apply(m)))
                .owner("publishing")
                .clock(clock)
                .backoff(Backoff.exponential(Duration.ofSeconds(10), Duration.ofSeconds(10)))
                .maxAttempts(maxAttempts)
                .build();
    }

    @Test
    void oneMessage_brokerDown_stalledFromTheFirstTry_untilAPublishSucceeds() {
        store.enqueueCommitted(List.of(Fixtures.message("m1", "order-1")));
        try (Relay relay = relay(100)) {
            assertThat(relay.publishing().stalledFor(T0)).as("nothing tried yet").isEmpty();

            relay.runOnce();
            Relay.Publishing p = relay.publishing();
            assertThat(p.failedCallsInARow()).isEqualTo(1);
            assertThat(p.failingSince()).contains(T0);
            assertThat(p.lastPublished()).isEmpty();
            clock.advance(Duration.ofSeconds(5));
            assertThat(relay.publishing().stalledFor(clock.instant()))
                    .as("the message waits for its retry: stalled although nothing is in flight")
                    .contains(Duration.ofSeconds(5));
            assertThat(relay.publishing().problem(clock.instant(), LIMIT)).isEmpty();

            // The relay tries again at each retry time; publishing stays stalled since T0.
            for (int i = 0; i < 4; i++) {
                clock.advance(Duration.ofSeconds(15));
                assertThat(relay.runOnce().released()).isEqualTo(1);
            }
            Instant now = clock.instant();
            assertThat(relay.publishing().failedCallsInARow()).isEqualTo(5);
            assertThat(relay.publishing().stalledFor(now)).contains(Duration.ofSeconds(65));
            assertThat(relay.publishing().problem(now, LIMIT))
                    .hasValueSatisfying(
                            reason ->
                                    assertThat(reason)
                                            .isEqualTo(
                                                    "publishing has been stalled for 1m5s (limit"
                                                            + " 1m): 5 failed publisher call(s) in"
                                                            + " a row, 0 in flight, last success"
                                                            + " never"));

            broker.set(m -> PublishOutcome.published());
            clock.advance(Duration.ofSeconds(15));
            assertThat(relay.runOnce().completed()).isEqualTo(1);
            Relay.Publishing after = relay.publishing();
            assertThat(after.failedCallsInARow()).isZero();
            assertThat(after.failingSince()).isEmpty();
            assertThat(after.lastPublished()).contains(clock.instant());
            assertThat(after.stalledFor(clock.instant())).isEmpty();
        }
    }

    @Test
    void lastTryDeadLettered_stallEndsOnceNoRetryIsDue() {
        store.enqueueCommitted(List.of(Fixtures.message("m1", "order-1")));
        try (Relay relay = relay(2)) {
            relay.runOnce();
            clock.advance(Duration.ofSeconds(15));
            assertThat(relay.runOnce().deadLettered()).isEqualTo(1);
            assertThat(relay.publishing().failedCallsInARow()).isEqualTo(2);
            assertThat(relay.publishing().stalledFor(clock.instant()))
                    .as("the first retry's window is still open")
                    .isPresent();
            clock.advance(Relay.DEFAULT_LEASE.plus(Relay.DEFAULT_POLL_INTERVAL));
            assertThat(relay.publishing().stalledFor(clock.instant()))
                    .as("no message waits for the broker any more (the dead letter has its alerts)")
                    .isEmpty();
        }
    }

    @Test
    void permanentFailure_failsACall_butStallsNothing() {
        broker.set(m -> PublishOutcome.failed(new PermanentFailureException("record too large")));
        store.enqueueCommitted(List.of(Fixtures.message("m1")));
        try (Relay relay = relay(8)) {
            assertThat(relay.runOnce().deadLettered()).isEqualTo(1);
            assertThat(relay.publishing().failedCallsInARow()).isEqualTo(1);
            assertThat(relay.publishing().stalledFor(clock.instant())).isEmpty();
        }
    }

    @Test
    void aCallThatDoesNotAnswer_stallsFromItsStart() throws Exception {
        store.enqueueCommitted(List.of(Fixtures.message("m1")));
        Fixtures.HangingPublisher hanging = new Fixtures.HangingPublisher();
        try (Relay relay =
                Relay.builder(store, hanging)
                        .clock(clock)
                        .deliveryTimeout(Duration.ofMinutes(5))
                        .shutdownTimeout(Duration.ZERO)
                        .build()) {
            relay.start();
            hanging.awaitEntered();
            Fixtures.await(
                    "the call is counted in flight",
                    Duration.ofSeconds(5),
                    () -> relay.publishing().callsInFlight() == 1);
            clock.advance(Duration.ofSeconds(70));
            Relay.Publishing p = relay.publishing();
            assertThat(p.failedCallsInARow()).as("no call failed yet").isZero();
            assertThat(p.oldestCallAge(clock.instant())).isEqualTo(Duration.ofSeconds(70));
            assertThat(p.problem(clock.instant(), LIMIT)).isPresent();
        }
    }
}
