package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The pipelined loop: claims overlap the publishing and recording of earlier batches, per-key order
 * holds across batches in flight (the reference store fences keys), messages in flight stay
 * bounded, claims grow and shrink, wake-ups are coalesced, close() lets every batch in flight
 * finish.
 */
class PipelineTest {
    private final InMemoryOutboxStore memory = new InMemoryOutboxStore();
    private final Fixtures.RecordingObserver observer = new Fixtures.RecordingObserver();

    @Test
    void perKeyOrder_holdsAcrossOverlappingBatches_withFailuresAndRetries() {
        // 200 keys drawn at random (fixed seed): a claim beside batches in flight meets some of
        // their keys and must leave those messages behind.
        java.util.Random random = new java.util.Random(42);
        Map<String, String> keyOf = new HashMap<>();
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 1_500; i++) {
            String key = "key-" + random.nextInt(200);
            keyOf.put("m" + i, key);
            messages.add(Fixtures.message("m" + i, key));
        }
        messages.addAll(Fixtures.messages("free", 100));
        memory.enqueueCommitted(messages);
        KeyTrackingPublisher publisher =
                new KeyTrackingPublisher(2_000_000, 0.03, null, new ConcurrentHashMap<>());
        AtomicInteger claimsDuringPublishing = new AtomicInteger();
        RecordingStore store =
                new RecordingStore(memory) {
                    @Override
                    public List<Delivery> claim(ClaimRequest request) {
                        if (publisher.concurrentCalls.get() > 0) {
                            claimsDuringPublishing.incrementAndGet();
                        }
                        return super.claim(request);
                    }
                };
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("pipelined-order")
                        .batchSize(60)
                        .minBatchSize(60)
                        .workers(2)
                        .backoff(Backoff.fixed(Duration.ZERO))
                        .maxAttempts(100)
                        .pollInterval(Duration.ofMillis(10))
                        .build()) {
            relay.start();
            Fixtures.await("the outbox is empty", Duration.ofSeconds(60), () -> memory.size() == 0);
        }
        assertThat(claimsDuringPublishing.get())
                .as("claims that ran while a publisher call of an earlier batch was in flight")
                .isGreaterThanOrEqualTo(2);
        assertThat(publisher.overlaps).as("a key in two calls at once").isEmpty();
        assertThat(publisher.maxConcurrentCalls.get())
                .as("publisher calls at once, across the batches in flight (workers 2)")
                .isBetween(1, 2);
        assertThat(store.completedPerId)
                .hasSize(1_600)
                .allSatisfy((id, count) -> assertThat(count.get()).as(id).isEqualTo(1));
        Map<String, List<Integer>> perKey = new HashMap<>();
        for (String id : publisher.firstPublished) {
            if (id.startsWith("m")) {
                int n = Integer.parseInt(id.substring(1));
                perKey.computeIfAbsent(keyOf.get(id), k -> new ArrayList<>()).add(n);
            }
        }
        assertThat(perKey).hasSize(200);
        perKey.forEach(
                (key, order) -> assertThat(order).as("first publications of %s", key).isSorted());
    }

    @Test
    void messagesInFlight_stayWithinMaxInFlight_whileBatchesOverlap() {
        memory.enqueueCommitted(Fixtures.messages("m", 2_000));
        RecordingStore store = new RecordingStore(memory);
        KeyTrackingPublisher publisher = new KeyTrackingPublisher(2_000_000);
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("bounded")
                        .batchSize(50)
                        .maxInFlight(120)
                        .pollInterval(Duration.ofMillis(10))
                        .build()) {
            relay.start();
            Fixtures.await("the outbox is empty", Duration.ofSeconds(60), () -> memory.size() == 0);
            // the store deletes a completed row before the pipeline counts its batch done
            Fixtures.await(
                    "no message in flight once every completion returned",
                    Duration.ofSeconds(5),
                    () -> relay.pipeline().messagesInFlight() == 0);
            assertThat(relay.pipeline().messagesInFlight()).isZero();
        }
        assertThat(store.maxHeld.get())
                .as("leases held at once: more than one batch (pipelined), never over maxInFlight")
                .isGreaterThan(50)
                .isLessThanOrEqualTo(120);
        assertThat(store.claims)
                .as("no claim asks for more than the batch size")
                .allSatisfy(c -> assertThat(c.limit()).isBetween(1, 50));
        assertThat(store.completedPerId).hasSize(2_000);
    }

    @Test
    void claims_doubleWhileFull_upToTheBatchSize_andFallBackWhenIdle() throws Exception {
        memory.enqueueCommitted(Fixtures.messages("m", 1_000));
        RecordingStore store = new RecordingStore(memory);
        try (Relay relay =
                Relay.builder(store, Fixtures.ScriptedPublisher.accepting())
                        .owner("adaptive")
                        .batchSize(200)
                        .minBatchSize(10)
                        .maxInFlight(10_000)
                        .pollInterval(Duration.ofMillis(20))
                        .build()) {
            relay.start();
            Fixtures.await("the outbox is empty", Duration.ofSeconds(20), () -> memory.size() == 0);
            int drained = store.claims.size();
            store.awaitClaims(drained + 3, Duration.ofSeconds(5));
        }
        List<Integer> limits = store.claims.stream().map(ClaimRequest::limit).toList();
        assertThat(limits.subList(0, 6))
                .as("a full claim doubles the next one, up to the batch size")
                .containsExactly(10, 20, 40, 80, 160, 200);
        assertThat(limits.get(limits.size() - 1))
                .as("idle claims are back at the smallest size")
                .isEqualTo(10);
    }

    @Test
    void aClaimFencedByTheKeysOfItsOwnBatches_isFollowedByAClaimAlone_ofTheSameSize()
            throws Exception {
        // Two hot keys: every claim beside a batch in flight finds both keys leased.
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            messages.add(Fixtures.message((i % 2 == 0 ? "a" : "b") + i, i % 2 == 0 ? "a" : "b"));
        }
        memory.enqueueCommitted(messages);
        List<int[]> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        Relay[] relay = new Relay[1];
        RecordingStore store =
                new RecordingStore(memory) {
                    @Override
                    public List<Delivery> claim(ClaimRequest request) {
                        int inFlight = relay[0].pipeline().messagesInFlight();
                        List<Delivery> claimed = super.claim(request);
                        seen.add(new int[] {inFlight, request.limit(), claimed.size()});
                        return claimed;
                    }
                };
        KeyTrackingPublisher publisher = new KeyTrackingPublisher(3_000_000);
        relay[0] =
                Relay.builder(store, publisher)
                        .owner("hot-keys")
                        .batchSize(40)
                        .minBatchSize(10)
                        .pollInterval(Duration.ofSeconds(30))
                        .wakeUpWindow(Duration.ofMillis(200))
                        .build();
        try (Relay r = relay[0]) {
            r.start();
            Fixtures.await("the outbox is empty", Duration.ofSeconds(20), () -> memory.size() == 0);
        }
        int fenced = 0;
        for (int i = 1; i < seen.size(); i++) {
            int[] before = seen.get(i - 1);
            int[] claim = seen.get(i);
            boolean beforeFull = i >= 2 && seen.get(i - 2)[2] == seen.get(i - 2)[1];
            if (before[0] > 0 && before[2] < before[1] && beforeFull) {
                fenced++;
                assertThat(claim[0]).as("claim %d starts with nothing in flight", i + 1).isZero();
                assertThat(claim[1])
                        .as("claim %d keeps the size of the fenced claim", i + 1)
                        .isGreaterThanOrEqualTo(before[1]);
            }
        }
        assertThat(fenced).as("claims fenced by the relay's own keys").isPositive();
        assertThat(publisher.overlaps).isEmpty();
    }

    @Test
    void aSmallBatch_isOnePublisherCall_aLargerOneIsSplitOverTheWorkers() {
        memory.enqueueCommitted(Fixtures.messages("small", 5));
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay = Relay.builder(memory, publisher).workers(4).build()) {
            assertThat(relay.runOnce().completed()).isEqualTo(5);
            assertThat(publisher.calls).as("5 messages, one call").hasSize(1);
            memory.enqueueCommitted(Fixtures.messages("large", 40));
            assertThat(relay.runOnce().completed()).isEqualTo(40);
        }
        assertThat(publisher.calls.subList(1, publisher.calls.size()))
                .as("40 messages over 4 workers")
                .hasSize(4)
                .allSatisfy(call -> assertThat(call).hasSize(10));
        assertThat(Dispatch.groups(8, 4, 8)).isEqualTo(1);
        assertThat(Dispatch.groups(9, 4, 8)).isEqualTo(2);
        assertThat(Dispatch.groups(500, 4, 8)).isEqualTo(4);
    }

    @Test
    void claimSizer_growsWhileFull_halvesWhenPartial_resetsWhenEmpty() {
        ClaimSizer sizer = new ClaimSizer(16, 500);
        assertThat(sizer.target()).isEqualTo(16);
        sizer.claimed(16, 16);
        assertThat(sizer.target()).isEqualTo(32);
        sizer.claimed(32, 32);
        sizer.claimed(64, 64);
        sizer.claimed(128, 128);
        sizer.claimed(256, 256);
        assertThat(sizer.target()).as("capped at the batch size").isEqualTo(500);
        sizer.claimed(500, 500);
        assertThat(sizer.target()).isEqualTo(500);
        sizer.claimed(100, 100);
        assertThat(sizer.target())
                .as("a full claim limited by the room in flight keeps the size")
                .isEqualTo(500);
        sizer.claimed(500, 300);
        assertThat(sizer.target()).as("partial: halved").isEqualTo(250);
        sizer.claimed(250, 0);
        assertThat(sizer.target()).as("empty: back to the smallest").isEqualTo(16);
        sizer.claimed(16, 3);
        assertThat(sizer.target()).as("never under the smallest").isEqualTo(16);
    }

    @Test
    void wakeUps_areCoalesced_toAtMostOneClaimPerWindow_andNoneIsLost() throws Exception {
        RecordingStore store = new RecordingStore(memory);
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        Duration window = Duration.ofMillis(50);
        int commits = 200;
        long started;
        long ended;
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("coalescing")
                        .minBatchSize(500)
                        .pollInterval(Duration.ofSeconds(30))
                        .wakeUpWindow(window)
                        .build()) {
            relay.start();
            store.awaitClaims(1, Duration.ofSeconds(5));
            int before = store.claims.size();
            started = System.nanoTime();
            for (int i = 0; i < commits; i++) {
                memory.enqueueCommitted(List.of(Fixtures.message("c" + i)));
                relay.wakeUp();
                relay.wakeUp();
                TimeUnit.MICROSECONDS.sleep(500);
            }
            ended = System.nanoTime();
            Fixtures.await(
                    "every commit is published",
                    Duration.ofSeconds(10),
                    () -> publisher.publishedIdsInOrder().size() == commits);
            long spanMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            int claims = store.claims.size() - before;
            assertThat(claims)
                    .as(
                            "claims for %d commits with %d wake-ups over %d ms, window %s",
                            commits, 2 * commits, spanMillis, window)
                    .isLessThanOrEqualTo((int) (spanMillis / window.toMillis()) + 2);
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(ended - started))
                .as("the committing thread was not slowed by wakeUp()")
                .isLessThan(10_000);
        assertThat(publisher.publishedIdsInOrder()).hasSize(commits).doesNotHaveDuplicates();
    }

    @Test
    void aWakeUpAfterIdle_claimsAtOnce_notAtTheEndOfTheWindow() throws Exception {
        RecordingStore store = new RecordingStore(memory);
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("idle-wake")
                        .pollInterval(Duration.ofSeconds(30))
                        .wakeUpWindow(Duration.ofSeconds(1))
                        .build()) {
            relay.start();
            store.awaitClaims(1, Duration.ofSeconds(5));
            long firstClaim = store.claimReturnedNanos.get(0);
            Fixtures.await( // the scenario: the relay idle for over a window since that claim
                    "over a window since the first claim",
                    Duration.ofSeconds(5),
                    () -> System.nanoTime() - firstClaim > TimeUnit.MILLISECONDS.toNanos(1_100));
            memory.enqueueCommitted(List.of(Fixtures.message("m1")));
            long woken = System.nanoTime();
            relay.wakeUp();
            store.awaitClaims(2, Duration.ofSeconds(5));
            assertThat(TimeUnit.NANOSECONDS.toMillis(store.claimReturnedNanos.get(1) - woken))
                    .as("no claim for over a window: the wake-up claims at once")
                    .isLessThan(900);
            Fixtures.await(
                    "m1 is published",
                    Duration.ofSeconds(5),
                    () -> !publisher.publishedIdsInOrder().isEmpty());
        }
        assertThat(publisher.publishedIdsInOrder()).containsExactly("m1");
    }

    @Test
    void theNextMessageOfAKey_isClaimedWhenItsPredecessorCompletes_withoutWaitingForAPoll()
            throws Exception {
        memory.enqueueCommitted(List.of(Fixtures.message("k1", "k")));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Fixtures.ScriptedPublisher publisher =
                new Fixtures.ScriptedPublisher(
                        m -> {
                            if (m.id().equals("k1")) {
                                Fixtures.enterThenAwait(entered, finish);
                            }
                            return PublishOutcome.published();
                        });
        RecordingStore store = new RecordingStore(memory);
        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("key-wake")
                        .pollInterval(Duration.ofSeconds(30))
                        .wakeUpWindow(Duration.ZERO)
                        .build()) {
            relay.start();
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            memory.enqueueCommitted(List.of(Fixtures.message("k2", "k")));
            int claimsBefore = store.claims.size();
            relay.wakeUp();
            store.awaitClaims(claimsBefore + 1, Duration.ofSeconds(5));
            assertThat(publisher.publishedIdsInOrder())
                    .as("k2 is fenced by the store while k1 is leased")
                    .containsExactly("k1");
            long released = System.nanoTime();
            finish.countDown();
            Fixtures.await(
                    "k2 is published",
                    Duration.ofSeconds(10),
                    () -> publisher.publishedIdsInOrder().size() == 2);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released))
                    .as("not a 30 s poll interval")
                    .isLessThan(5_000);
        }
        assertThat(publisher.publishedIdsInOrder()).containsExactly("k1", "k2");
    }

    @Test
    void close_letsEveryBatchInFlightFinish_andGivesBackWhatWasNotHandedOver() throws Exception {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            messages.add(Fixtures.message("m" + i, "k" + (i % 4)));
        }
        memory.enqueueCommitted(messages);
        CountDownLatch twoCalls = new CountDownLatch(2);
        CountDownLatch finish = new CountDownLatch(1);
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.held(twoCalls, finish);
        RecordingStore store = new RecordingStore(memory);
        Relay relay =
                Relay.builder(store, publisher)
                        .owner("closing-pipeline")
                        .observer(observer)
                        .batchSize(2)
                        .workers(2)
                        .build();
        relay.start();
        assertThat(twoCalls.await(5, TimeUnit.SECONDS))
                .as("two calls (of two batches) in flight")
                .isTrue();
        Fixtures.await(
                "the loop holds its maximum",
                Duration.ofSeconds(5),
                () -> relay.pipeline().messagesInFlight() == 4);
        Thread closer = new Thread(relay::close);
        closer.start();
        closer.join(300);
        assertThat(closer.isAlive()).as("close() waits for the batches in flight").isTrue();
        finish.countDown();
        closer.join(5_000);
        assertThat(closer.isAlive()).isFalse();

        assertThat(store.held.get()).as("no lease left behind").isZero();
        assertThat(store.claims).as("batches of two, two in flight").hasSizeGreaterThanOrEqualTo(2);
        List<String> published = publisher.publishedIdsInOrder();
        assertThat(published).as("the calls in flight finished").hasSizeGreaterThanOrEqualTo(2);
        assertThat(observer.deliveries)
                .filteredOn(o -> o.outcome() == Outcome.COMPLETED)
                .hasSize(published.size());
        assertThat(observer.deliveries)
                .as("every claimed message was completed or given back untried")
                .allSatisfy(
                        o -> assertThat(o.outcome()).isIn(Outcome.COMPLETED, Outcome.ABANDONED));
        assertThat(memory.size()).isEqualTo(40 - published.size());
        assertThat(memory.claim(new ClaimRequest("x", Instant.now(), Duration.ofMinutes(1), 100)))
                .as("what is left is claimable at once (no lease held), attempts untouched")
                .hasSize(40 - published.size())
                .allSatisfy(d -> assertThat(d.attempt()).isEqualTo(1));
    }

    @Test
    void aPublisherSlowToAnswer_doesNotStallTheOtherBatches() throws Exception {
        // One call hangs until released; with two workers the pipeline keeps draining beside it.
        List<Message> messages = new ArrayList<>(List.of(Fixtures.message("slow")));
        messages.addAll(Fixtures.messages("m", 300));
        memory.enqueueCommitted(messages);
        CountDownLatch finish = new CountDownLatch(1);
        Publisher publisher =
                (batch, timeout) -> {
                    if (batch.stream().anyMatch(m -> m.id().equals("slow"))) {
                        Fixtures.awaitOpen(finish);
                    }
                    return batch.stream().map(m -> PublishOutcome.published()).toList();
                };
        try (Relay relay =
                Relay.builder(memory, publisher)
                        .owner("slow-call")
                        .batchSize(10)
                        .minBatchSize(10)
                        .maxInFlight(40)
                        .workers(2)
                        .pollInterval(Duration.ofMillis(10))
                        .build()) {
            relay.start();
            Fixtures.await(
                    "everything but the slow message's batch is done",
                    Duration.ofSeconds(10),
                    () -> memory.size() <= 10);
            finish.countDown();
            Fixtures.await("the outbox is empty", Duration.ofSeconds(10), () -> memory.size() == 0);
        }
    }
}
