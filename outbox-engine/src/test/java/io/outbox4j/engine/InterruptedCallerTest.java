package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** Outcome writes ignore the caller's interrupt and run under their own bound. */
class InterruptedCallerTest extends RelayRig {
    /** Runs as a completion write starts, on the thread that writes it. */
    private volatile Runnable onComplete = () -> {};

    /** Like a JDBC driver: a write on an interrupted thread fails. */
    private final RecordingStore interruptSensitive =
            new RecordingStore(memory) {
                private void check() {
                    if (Thread.currentThread().isInterrupted()) {
                        throw new IllegalStateException("write aborted: thread interrupted");
                    }
                }

                @Override
                public Set<String> complete(Completion completion) {
                    onComplete.run();
                    check();
                    return super.complete(completion);
                }

                @Override
                public boolean release(Release release) {
                    check();
                    return super.release(release);
                }

                @Override
                public boolean deadLetter(DeadLetter deadLetter) {
                    check();
                    return super.deadLetter(deadLetter);
                }

                @Override
                public Set<String> abandon(Abandonment abandonment) {
                    check();
                    return super.abandon(abandonment);
                }

                @Override
                public Set<String> extend(Extension extension) {
                    check();
                    return super.extend(extension);
                }
            };

    @Test
    void aCompletion_isRecorded_whenTheCallerIsInterruptedAfterThePublish() {
        memory.enqueueCommitted(Fixtures.messages("m", 2));
        Thread caller = Thread.currentThread();
        // The caller is interrupted the moment the completion write starts: after the publish,
        // while the caller waits for the write. A write run on the caller's thread fails (the
        // store refuses writes on an interrupted thread), and so does a caller that stops waiting.
        onComplete = caller::interrupt;
        Publisher publisher =
                (messages, timeout) ->
                        messages.stream().map(m -> PublishOutcome.published()).toList();
        Relay.Result result;
        try (Relay relay = relayOn(interruptSensitive, publisher).workers(1).build()) {
            result = relay.runOnce();
        } finally {
            onComplete = () -> {};
            assertThat(Thread.interrupted()).as("the caller's interrupt is kept").isTrue();
        }
        assertThat(result).isEqualTo(new Relay.Result(2, 2, 2, 0, 0, 0));
        assertThat(observer.storeErrors).isEmpty();
        assertThat(memory.size()).isZero();
    }

    @Test
    void anAlreadyInterruptedCaller_publishesNothing_andGivesTheBatchBackUntried() {
        memory.enqueueCommitted(Fixtures.messages("m", 3));
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        Relay.Result result;
        try (Relay relay = relayOn(interruptSensitive, publisher).build()) {
            Thread.currentThread().interrupt();
            result = relay.runOnce();
        } finally {
            assertThat(Thread.interrupted()).as("the caller's interrupt is kept").isTrue();
        }
        assertThat(result).isEqualTo(new Relay.Result(3, 0, 0, 0, 0, 3));
        assertThat(publisher.calls).isEmpty();
        assertThat(observer.storeErrors).isEmpty();
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .as("due at once, no attempt used up")
                .extracting(d -> d.attempt())
                .containsExactly(1, 1, 1);
    }

    @Test
    void aCallerInterruptedDuringAPublish_cancelsIt_releasesAtOnce_andStillRecords()
            throws Exception {
        memory.enqueueCommitted(Fixtures.messages("m", 2));
        Fixtures.HangingPublisher hanging = new Fixtures.HangingPublisher();
        Fixtures.Caller caller;
        try (Relay relay = relayOn(interruptSensitive, hanging).workers(1).build()) {
            caller = new Fixtures.Caller(relay);
            hanging.awaitEntered();
            caller.thread.interrupt();
            caller.awaitReturned();
        }
        assertThat(caller.result()).isEqualTo(new Relay.Result(2, 0, 0, 2, 0, 0));
        assertThat(caller.interruptedAfter()).as("the caller's interrupt is kept").isTrue();
        Fixtures.await("the call is cancelled", Duration.ofSeconds(5), hanging.interrupted::get);
        assertThat(observer.outcomes()).containsExactly(Outcome.RELEASED, Outcome.RELEASED);
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .as("released for an immediate retry")
                .hasSize(2);
    }

    @Test
    void aHangingOutcomeWrite_isAbandonedAtItsBound_andTheRestOfTheBatchIsNotWaitedFor()
            throws Exception {
        memory.enqueueCommitted(Fixtures.messages("m", 3));
        CountDownLatch never = new CountDownLatch(1);
        RecordingStore hanging =
                new RecordingStore(memory) {
                    @Override
                    public Set<String> complete(Completion completion) {
                        try {
                            never.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        return Set.of();
                    }
                };
        Publisher publisher = Fixtures.ScriptedPublisher.failing("m2"::equals);
        long started = System.nanoTime();
        Relay.Result result;
        try (Relay relay =
                relayOn(hanging, publisher).storeWriteTimeout(Duration.ofMillis(300)).build()) {
            result = relay.runOnce();
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(3_000);
        assertThat(result).isEqualTo(new Relay.Result(3, 2, 0, 0, 0, 0));
        assertThat(observer.storeErrors)
                .singleElement()
                .satisfies(
                        e ->
                                assertThat(e)
                                        .isInstanceOf(TimeoutException.class)
                                        .hasMessageContaining("within 300ms"));
        assertThat(hanging.releases).as("skipped: the store is hanging").isEmpty();
        assertThat(observer.outcomes())
                .containsExactly(
                        Outcome.PUBLISHED_NOT_RECORDED,
                        Outcome.PUBLISHED_NOT_RECORDED,
                        Outcome.NOT_RECORDED);
    }
}
