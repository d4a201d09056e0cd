package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The long-running relay: polling, wake-ups, store errors, close(). */
class RelayLoopTest {
    private final InMemoryOutboxStore memory = new InMemoryOutboxStore();
    private final RecordingStore store = new RecordingStore(memory);
    private final Fixtures.RecordingObserver observer = new Fixtures.RecordingObserver();

    @Test
    void wakeUp_publishesAtOnce_insteadOfAfterThePollInterval() throws Exception {
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("wake")
                        .pollInterval(Duration.ofSeconds(10))
                        .build()) {
            relay.start();
            store.awaitClaims(1, Duration.ofSeconds(5));
            assertThat(store.claims).as("the first poll found nothing").hasSize(1);
            long committed = System.nanoTime();
            memory.enqueueCommitted(List.of(Fixtures.message("m1")));
            relay.wakeUp();
            Fixtures.await(
                    "m1 is published", Duration.ofSeconds(5), () -> !publisher.calls.isEmpty());
            long latencyMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - committed);
            assertThat(latencyMillis)
                    .as("commit-to-publish latency with a 10s poll interval")
                    .isLessThan(2_000);
            assertThat(store.claims).as("woken once, not polling").hasSize(2);
        }
    }

    @Test
    void aStoreWithWakeUps_wakesTheRelayOnACommitByAnotherStoreInstance_withoutWakeUpCalls()
            throws Exception {
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        // Another instance over the same messages: the writer's, as another process's would be.
        InMemoryOutboxStore writer = memory.withDeadLettersBlockingTheirKey(true);
        try (Relay relay =
                Relay.builder(memory, publisher)
                        .owner("listening")
                        .pollInterval(Duration.ofSeconds(30))
                        .build()) {
            relay.start();
            long committed = System.nanoTime();
            writer.enqueueCommitted(List.of(Fixtures.message("m1")));
            Fixtures.await(
                    "m1 is published", Duration.ofSeconds(5), () -> !publisher.calls.isEmpty());
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - committed))
                    .as("commit-to-publish latency with a 30s poll interval and no wakeUp() call")
                    .isLessThan(1_000);
        }
    }

    @Test
    void aWakeUpDuringABatch_isNotLost() throws Exception {
        CountDownLatch claimReturned = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicInteger claimCount = new AtomicInteger();
        RecordingStore slowFirstClaim =
                new RecordingStore(memory) {
                    @Override
                    public List<Delivery> claim(ClaimRequest request) {
                        List<Delivery> claimed = super.claim(request);
                        if (claimCount.incrementAndGet() == 1) {
                            claimReturned.countDown();
                            try {
                                proceed.await(5, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        return claimed;
                    }
                };
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay =
                Relay.builder(slowFirstClaim, publisher)
                        .pollInterval(Duration.ofSeconds(10))
                        .build()) {
            relay.start();
            assertThat(claimReturned.await(5, TimeUnit.SECONDS)).isTrue();
            // The first claim already ran (and found nothing); the commit and its wake-up arrive
            // during the batch.
            memory.enqueueCommitted(List.of(Fixtures.message("m1")));
            relay.wakeUp();
            long woken = System.nanoTime();
            proceed.countDown();
            Fixtures.await(
                    "m1 is published", Duration.ofSeconds(5), () -> !publisher.calls.isEmpty());
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - woken)).isLessThan(2_000);
        }
    }

    @Test
    void afterAFullBatch_theLoopClaimsAgainAtOnce() {
        memory.enqueueCommitted(Fixtures.messages("m", 25));
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        long started = System.nanoTime();
        try (Relay relay =
                Relay.builder(store, publisher)
                        .batchSize(10)
                        .pollInterval(Duration.ofSeconds(10))
                        .build()) {
            relay.start();
            Fixtures.await("all 25 are completed", Duration.ofSeconds(5), () -> memory.size() == 0);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
                .as("no poll interval between full batches")
                .isLessThan(3_000);
        assertThat(store.claims.size()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void withoutWakeUp_theLoopPollsAtItsInterval_whileClaimsFindNothing() throws Exception {
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("poll")
                        .pollInterval(Duration.ofMillis(100))
                        .build()) {
            relay.start();
            store.awaitClaims(6, Duration.ofSeconds(5));
        }
        List<Long> returned = store.claimReturnedNanos;
        long total = 0;
        for (int i = 1; i < 6; i++) {
            long gapMillis = TimeUnit.NANOSECONDS.toMillis(returned.get(i) - returned.get(i - 1));
            assertThat(gapMillis).as("gap before claim %d", i + 1).isGreaterThanOrEqualTo(100);
            total += gapMillis;
        }
        assertThat(total / 5)
                .as("mean gap between polls, for a 100ms interval (not a busy loop, not stalled)")
                .isBetween(100L, 400L);
    }

    @Test
    void withoutWakeUp_afterAClaimThatFoundMessages_theLoopPollsSoon_thenBacksOffToItsInterval()
            throws Exception {
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("adaptive")
                        .pollInterval(Duration.ofMillis(400))
                        .build()) {
            relay.start();
            store.awaitClaims(1, Duration.ofSeconds(5));
            memory.enqueueCommitted(List.of(Fixtures.message("m1")));
            Fixtures.await(
                    "m1 is published by polling",
                    Duration.ofSeconds(5),
                    () -> !publisher.calls.isEmpty());
            int found = store.claims.size() - 1;
            store.awaitClaims(found + 8, Duration.ofSeconds(10));
        }
        assertThat(publisher.publishedIdsInOrder()).containsExactly("m1");
        List<Long> returned = store.claimReturnedNanos;
        int found = indexOfClaimThatFound(returned.size());
        List<Long> gaps = new java.util.ArrayList<>();
        for (int i = found + 1; i < found + 8; i++) {
            gaps.add(TimeUnit.NANOSECONDS.toMillis(returned.get(i) - returned.get(i - 1)));
        }
        // 10, 20, 40, 80, 160, 320 ms, then the 400 ms interval (each at least its wait)
        assertThat(gaps.get(0))
                .as("the first idle wait after a claim that found messages (gaps: %s)", gaps)
                .isBetween(10L, 200L);
        long[] least = {10, 20, 40, 80, 160, 320, 400};
        for (int i = 0; i < least.length; i++) {
            assertThat(gaps.get(i))
                    .as("idle wait %d after the claim that found messages (gaps: %s)", i + 1, gaps)
                    .isGreaterThanOrEqualTo(least[i]);
        }
    }

    /** The index of the one claim of this test's store that returned a message. */
    private int indexOfClaimThatFound(int claims) {
        for (int i = 0; i < claims; i++) {
            if (store.claimedCounts.get(i) > 0) {
                return i;
            }
        }
        throw new AssertionError("no claim found a message");
    }

    @Test
    void withoutWakeUp_whileMessagesFlow_eachIsClaimedWithinMilliseconds_notAPollInterval()
            throws Exception {
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        List<Long> latencies = new java.util.ArrayList<>();
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("flowing")
                        .pollInterval(Duration.ofSeconds(1))
                        .build()) {
            relay.start();
            store.awaitClaims(1, Duration.ofSeconds(5));
            // a writer in another process: commits every 30 ms, and nothing wakes the relay
            for (int i = 0; i < 30; i++) {
                long committed = System.nanoTime();
                memory.enqueueCommitted(List.of(Fixtures.message("m" + i)));
                int published = i + 1;
                Fixtures.await(
                        "m" + i + " is published",
                        Duration.ofSeconds(5),
                        () -> publisher.publishedIdsInOrder().size() >= published);
                latencies.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - committed));
                Thread.sleep(30);
            }
        }
        List<Long> sorted = latencies.stream().sorted().toList();
        // Polling only at its 1 s interval, the first message waits up to 1 s and so does every
        // later one (each is committed after the previous one was published).
        assertThat(sorted.get(sorted.size() / 2))
                .as(
                        "median commit-to-publish latency with a 1 s poll interval (all: %s)",
                        latencies)
                .isLessThan(250L);
    }

    @Test
    void aStoreErrorWhileClaiming_isReported_andRetriedAfterAPauseThatDoubles() throws Exception {
        memory.enqueueCommitted(List.of(Fixtures.message("m1")));
        AtomicInteger failuresLeft = new AtomicInteger(3);
        RecordingStore flaky =
                new RecordingStore(
                        new RecordingStore(memory) {
                            @Override
                            public List<Delivery> claim(ClaimRequest request) {
                                if (failuresLeft.getAndDecrement() > 0) {
                                    throw new IllegalStateException("connection refused");
                                }
                                return super.claim(request);
                            }
                        });
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay =
                Relay.builder(flaky, publisher)
                        .owner("flaky-claims")
                        .observer(observer)
                        .pollInterval(Duration.ofMillis(50))
                        .build()) {
            relay.start();
            flaky.awaitClaims(4, Duration.ofSeconds(5));
            Fixtures.await("m1 is completed", Duration.ofSeconds(5), () -> memory.size() == 0);
        }
        assertThat(observer.storeErrors)
                .hasSize(3)
                .allSatisfy(e -> assertThat(e).hasMessage("connection refused"));
        assertThat(CapturedLogs.storeLog("flaky-claims"))
                .contains(
                        "relay 'flaky-claims': claim failed (1 in a row), next try in 50ms:"
                                + " java.lang.IllegalStateException: connection refused",
                        "relay 'flaky-claims': claim failed (3 in a row), next try in 200ms:"
                                + " java.lang.IllegalStateException: connection refused");
        List<Long> returned = flaky.claimReturnedNanos;
        long[] minimumMillis = {50, 100, 200};
        for (int i = 0; i < 3; i++) {
            assertThat(TimeUnit.NANOSECONDS.toMillis(returned.get(i + 1) - returned.get(i)))
                    .as("pause after failure %d", i + 1)
                    .isGreaterThanOrEqualTo(minimumMillis[i])
                    .isLessThan(minimumMillis[i] + 1_000);
        }
    }

    @Test
    void close_stopsClaiming_andWaitsForTheInFlightBatch_whichIsStillRecorded() throws Exception {
        memory.enqueueCommitted(List.of(Fixtures.message("m1")));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Publisher publisher =
                (messages, timeout) -> {
                    entered.countDown();
                    try {
                        finish.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        return messages.stream().map(m -> PublishOutcome.failed(e)).toList();
                    }
                    return messages.stream().map(m -> PublishOutcome.published()).toList();
                };
        Relay relay =
                Relay.builder(store, publisher)
                        .owner("closing")
                        .observer(observer)
                        .pollInterval(Duration.ofMillis(20))
                        .build();
        relay.start();
        Thread loop = Fixtures.relayThread("closing");
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(relay::close);
        closer.start();
        closer.join(300);
        assertThat(closer.isAlive()).as("close() waits for the delivery in flight").isTrue();
        finish.countDown();
        closer.join(5_000);
        assertThat(closer.isAlive()).isFalse();

        assertThat(memory.size()).as("published during shutdown and still completed").isZero();
        assertThat(observer.outcomes()).containsExactly(Outcome.COMPLETED);
        assertThat(loop.isAlive()).as("the loop has ended").isFalse();
        int claimsAtClose = store.claims.size();
        memory.enqueueCommitted(List.of(Fixtures.message("m2")));
        relay.wakeUp();
        assertThat(store.claims).as("no claim after close").hasSize(claimsAtClose);
        assertThatThrownBy(relay::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(relay::runOnce)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        relay.close();
    }

    @Test
    void close_duringABatch_givesBackTheMessagesNotYetStarted_withoutUsingTheirAttempts()
            throws Exception {
        memory.enqueueCommitted(List.of(Fixtures.message("k1", "k"), Fixtures.message("k2", "k")));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.held(entered, finish);
        Relay relay = Relay.builder(store, publisher).owner("draining").observer(observer).build();
        relay.start();
        assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(relay::close);
        closer.start();
        Fixtures.await(
                "close() is waiting for the batch",
                Duration.ofSeconds(5),
                () -> closer.getState() == Thread.State.TIMED_WAITING);
        finish.countDown();
        closer.join(5_000);
        assertThat(closer.isAlive()).isFalse();

        assertThat(publisher.publishedIdsInOrder()).containsExactly("k1");
        assertThat(observer.deliveries)
                .extracting(o -> o.messageId() + ":" + o.outcome())
                .containsExactly("k1:COMPLETED", "k2:ABANDONED");
        assertThat(store.abandonments)
                .singleElement()
                .satisfies(a -> assertThat(store.idsOf(a.receipts())).containsExactly("k2"));
        assertThat(memory.attempts("k2")).as("not started: no attempt used").hasValue(0);
    }

    @Test
    void close_pastTheShutdownTimeout_abortsTheBatch_cancelsItsCall_andReleasesItsDeliveries()
            throws Exception {
        memory.enqueueCommitted(List.of(Fixtures.message("m1")));
        Fixtures.HangingPublisher hanging = new Fixtures.HangingPublisher();
        Relay relay =
                Relay.builder(store, hanging)
                        .observer(observer)
                        .deliveryTimeout(Duration.ofSeconds(30))
                        .shutdownTimeout(Duration.ofMillis(200))
                        .build();
        relay.start();
        hanging.awaitEntered();
        long started = System.nanoTime();
        relay.close();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(3_000);
        Fixtures.await(
                "the hanging call is cancelled", Duration.ofSeconds(5), hanging.interrupted::get);
        assertThat(observer.outcomes()).containsExactly(Outcome.RELEASED);
        assertThat(store.releases)
                .singleElement()
                .satisfies(
                        r ->
                                assertThat(r.error())
                                        .contains(
                                                "the relay closed before the publisher answered"));
        assertThat(memory.attempts("m1")).hasValue(1);
        assertThat(memory.claim(new ClaimRequest("x", Instant.now(), Duration.ofMinutes(1), 10)))
                .as("released for an immediate retry, not left to its lease")
                .hasSize(1);
    }

    @Test
    void
            close_pastTheShutdownTimeout_abortsARunOnceOnTheCallersThread_withoutInterruptingThatThread()
                    throws Exception {
        memory.enqueueCommitted(Fixtures.messages("m", 2));
        Fixtures.HangingPublisher hanging = new Fixtures.HangingPublisher();
        Relay relay =
                Relay.builder(store, hanging)
                        .observer(observer)
                        .workers(1)
                        .shutdownTimeout(Duration.ZERO)
                        .build();
        Fixtures.Caller caller = new Fixtures.Caller(relay);
        hanging.awaitEntered();
        relay.close();
        caller.awaitReturned();
        assertThat(caller.result()).isEqualTo(new Relay.Result(2, 0, 0, 2, 0, 0));
        assertThat(caller.interruptedAfter())
                .as("close() does not interrupt a thread it does not own")
                .isFalse();
    }

    @Test
    void start_twice_isRejected_andCloseIsIdempotent() {
        Relay relay = Relay.builder(store, Fixtures.ScriptedPublisher.accepting()).build();
        relay.start();
        assertThatThrownBy(relay::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already started");
        relay.close();
        relay.close();
    }

    @Test
    void runOnce_worksWithoutStart_andWhileTheLoopRuns() {
        memory.enqueueCommitted(Fixtures.messages("m", 3));
        try (Relay relay = Relay.builder(store, Fixtures.ScriptedPublisher.accepting()).build()) {
            assertThat(relay.runOnce().completed()).isEqualTo(3);
            relay.start();
            memory.enqueueCommitted(Fixtures.messages("n", 2));
            Relay.Result result = relay.runOnce();
            Fixtures.await(
                    "everything is completed", Duration.ofSeconds(5), () -> memory.size() == 0);
            assertThat(result.claimed()).isBetween(0, 2);
        }
        assertThat(store.completedPerId)
                .hasSize(5)
                .allSatisfy((id, count) -> assertThat(count.get()).isEqualTo(1));
    }
}
