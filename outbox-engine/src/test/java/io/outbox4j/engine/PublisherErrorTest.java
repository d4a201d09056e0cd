package io.outbox4j.engine;

import static io.outbox4j.engine.Fixtures.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A java.lang.Error from a publisher: observed, leases released, rethrown. */
class PublisherErrorTest extends RelayRig {
    /**
     * Two workers: lane {a1} and lane {b1, b2}. The call with a1 throws an Error while b1's call is
     * in flight; b1's call is let go only once the engine has seen the Error (the first clock read
     * after it), so b2 is deterministically never started.
     */
    @Test
    void anError_isObserved_itsLeaseReleased_theRestGivenBackUntried_thenRethrown() {
        enqueue(message("b1", "b"), message("a1", "a"), message("b2", "b"));
        AssertionError boom = new AssertionError("publisher bug");
        CountDownLatch errorSeen = new CountDownLatch(1);
        Publisher publisher =
                (messages, timeout) -> {
                    List<String> ids = Fixtures.ids(messages);
                    if (ids.contains("a1")) {
                        clock.onNextInstant(errorSeen::countDown);
                        throw boom;
                    }
                    try {
                        assertThat(errorSeen.await(5, TimeUnit.SECONDS)).isTrue();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return messages.stream().map(m -> PublishOutcome.published()).toList();
                };
        try (Relay relay =
                relayOn(memory, publisher)
                        .workers(2)
                        .minMessagesPerCall(1)
                        .backoff(attempt -> Duration.ofMinutes(1))
                        .build()) {
            assertThatThrownBy(relay::runOnce).isSameAs(boom);
        }
        assertThat(observer.deliveries)
                .extracting(o -> o.outcome() + (o.publisherThrewError() ? "+error" : ""))
                .containsExactly("COMPLETED", "RELEASED+error", "ABANDONED");
        Observation a1 = observer.deliveries.get(1);
        assertThat(a1.error()).containsSame(boom);
        assertThat(observer.deliveries.get(2).error())
                .hasValueSatisfying(
                        e -> assertThat(e).hasMessageContaining("the publisher threw an Error"));
        assertThat(memory.size()).isEqualTo(2);
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofHours(1), 10)))
                .extracting(d -> d.message().id())
                .as("b2 is due again at once")
                .containsExactly("b2");
        clock.advance(Duration.ofMinutes(2));
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .extracting(d -> d.message().id())
                .as("a1 after the backoff")
                .containsExactly("a1");
    }

    @Test
    void anError_inTheRelayLoop_isObserved_andEndsTheLoop() throws Exception {
        enqueue(message("m1"));
        AssertionError boom = new AssertionError("publisher bug");
        Publisher publisher =
                (messages, timeout) -> {
                    throw boom;
                };
        AtomicReference<Throwable> uncaught = new AtomicReference<>();
        AtomicReference<Thread> died = new AtomicReference<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler(
                (t, e) -> {
                    uncaught.set(e);
                    died.set(t);
                });
        try (Relay relay =
                Relay.builder(memory, publisher)
                        .owner("error-loop")
                        .clock(clock)
                        .observer(observer)
                        .pollInterval(Duration.ofMillis(10))
                        .build()) {
            relay.start();
            Fixtures.await(
                    "the Error reaches the uncaught-exception handler",
                    Duration.ofSeconds(5),
                    () -> died.get() != null);
            died.get().join(5_000);
            assertThat(died.get().isAlive()).as("the loop ended").isFalse();
            assertThat(died.get().getName()).isEqualTo("outbox4j-relay-error-loop");
            assertThat(uncaught.get()).isSameAs(boom);
            assertThat(observer.deliveries)
                    .singleElement()
                    .satisfies(
                            o -> {
                                assertThat(o.publisherThrewError()).isTrue();
                                assertThat(o.outcome()).isEqualTo(Outcome.RELEASED);
                            });
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
        assertThat(memory.attempts("m1")).as("claimed once, released").hasValue(1);
    }

    @Test
    void messagesOfAnErrorCall_keepTheirOrderBehindIt() {
        List<Message> messages = List.of(Fixtures.message("k1", "k"), Fixtures.message("k2", "k"));
        memory.enqueueCommitted(messages);
        Publisher publisher =
                (batch, timeout) -> {
                    throw new StackOverflowError();
                };
        try (Relay relay =
                relayOn(memory, publisher).backoff(attempt -> Duration.ofMinutes(1)).build()) {
            assertThatThrownBy(relay::runOnce).isInstanceOf(StackOverflowError.class);
        }
        assertThat(observer.outcomes()).containsExactly(Outcome.RELEASED, Outcome.ABANDONED);
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .as("k2 waits behind k1")
                .isEmpty();
        clock.advance(Duration.ofMinutes(2));
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .extracting(d -> d.message().id())
                .as("k1 after the backoff; k2 only once k1 is finished")
                .containsExactly("k1");
        assertThat(memory.attempts("k2")).as("k2 was never tried").hasValue(0);
    }
}
