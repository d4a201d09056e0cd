package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay.State;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Relay#state()} and {@link Relay#lastClaim()} through a relay's life. */
class RelayStateTest {
    private static final Duration WITHIN = Duration.ofSeconds(5);

    private final InMemoryOutboxStore memory = new InMemoryOutboxStore();

    @Test
    void notStarted_running_failingWhileClaimsFail_runningAgain_stoppedAfterClose() {
        AtomicBoolean down = new AtomicBoolean();
        RecordingStore store =
                new RecordingStore(memory) {
                    @Override
                    public List<Delivery> claim(ClaimRequest request) {
                        if (down.get()) {
                            throw new IllegalStateException("database unreachable");
                        }
                        return super.claim(request);
                    }
                };
        Relay relay =
                Relay.builder(store, Fixtures.ScriptedPublisher.accepting())
                        .owner("states")
                        .pollInterval(Duration.ofMillis(20))
                        .build();
        assertThat(relay.state()).isEqualTo(State.NOT_STARTED);
        assertThat(relay.lastClaim()).isEmpty();

        Instant beforeStart = Instant.now();
        relay.start();
        Fixtures.await("a first claim", WITHIN, () -> relay.lastClaim().isPresent());
        assertThat(relay.state()).isEqualTo(State.RUNNING);
        assertThat(relay.lastClaim().orElseThrow()).isAfterOrEqualTo(beforeStart);

        down.set(true);
        Fixtures.await("FAILING once a claim failed", WITHIN, () -> relay.state() == State.FAILING);
        Instant lastGood = relay.lastClaim().orElseThrow();

        down.set(false);
        Fixtures.await(
                "RUNNING after a successful claim", WITHIN, () -> relay.state() == State.RUNNING);
        assertThat(relay.lastClaim().orElseThrow()).isAfter(lastGood);

        relay.close();
        assertThat(relay.state()).isEqualTo(State.STOPPED);
    }

    @Test
    void stopping_whileABatchFinishes_thenStopped() throws Exception {
        memory.enqueueCommitted(List.of(Fixtures.message("m1")));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Publisher slow = Fixtures.ScriptedPublisher.held(entered, release);
        Relay relay = Relay.builder(memory, slow).owner("stopping").build();
        relay.start();
        assertThat(entered.await(5, TimeUnit.SECONDS)).as("the publisher was called").isTrue();
        Thread closer = new Thread(relay::close, "closer");
        closer.start();
        Fixtures.await(
                "STOPPING while the batch runs", WITHIN, () -> relay.state() == State.STOPPING);
        release.countDown();
        closer.join(10_000);
        assertThat(closer.isAlive()).isFalse();
        assertThat(relay.state()).isEqualTo(State.STOPPED);
        assertThat(memory.size()).as("the batch was recorded (completed)").isZero();
    }

    @Test
    void aPublisherError_endsTheLoop_stopped() throws Exception {
        memory.enqueueCommitted(List.of(Fixtures.message("m1")));
        AssertionError boom = new AssertionError("publisher bug");
        Publisher broken =
                (List<Message> messages, Duration timeout) -> {
                    throw boom;
                };
        AtomicReference<Throwable> uncaught = new AtomicReference<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.set(e));
        try (Relay relay = Relay.builder(memory, broken).owner("error-state").build()) {
            relay.start();
            Fixtures.await("the loop ends", WITHIN, () -> relay.state() == State.STOPPED);
            assertThat(uncaught.get()).isSameAs(boom);
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
    }

    @Test
    void runOnce_setsLastClaim_butNotTheLoopState() {
        try (Relay relay = Relay.builder(memory, Fixtures.ScriptedPublisher.accepting()).build()) {
            relay.runOnce();
            assertThat(relay.lastClaim()).isPresent();
            assertThat(relay.state()).isEqualTo(State.NOT_STARTED);
        }
    }
}
