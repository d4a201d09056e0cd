package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.ids;
import static io.outbox4j.tck.Describe.idsOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Concurrency"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code Concurrency}.
 */
abstract class StoreConcurrencyRules extends StoreRules {
    StoreConcurrencyRules(OutboxStoreContract kit) {
        super(kit);
    }

    private static final int CLAIMERS = 4;
    private static final int MAX_VIOLATIONS = 20;
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());

    private List<Message> enqueueMany() {
        int count = concurrencyMessageCount();
        if (count < 200) {
            throw new IllegalStateException(
                    "concurrencyMessageCount() must be at least 200, but was " + count);
        }
        List<Message> all = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            all.add(message().payload("concurrent " + i).build());
        }
        for (int from = 0; from < count; from += 500) {
            enqueueCommitted(all.subList(from, Math.min(count, from + 500)));
        }
        syncWithWallClock();
        return all;
    }

    /**
     * Records that {@code owner} holds a live lease on message {@code id}: a violation if another
     * claimer still held one.
     */
    private void hold(Map<String, String> holder, String id, String owner) {
        String previous = holder.putIfAbsent(id, owner);
        if (previous != null) {
            violation(
                    "'"
                            + id
                            + "' was handed to "
                            + owner
                            + " while "
                            + previous
                            + " still held a live lease on it");
        }
    }

    private void violation(String text) {
        if (violations.size() < MAX_VIOLATIONS) {
            violations.add(text);
        }
    }

    /**
     * A claimer that found nothing while others hold leases gives them the processor: the kit's
     * stores may be in memory, where its next claim would otherwise spin on a 2-core machine.
     */
    @SuppressWarnings("ThreadPriorityCheck") // a hint only: correctness never depends on it
    private static void letOthersRun() {
        Thread.yield();
    }

    private void race(Worker worker) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CLAIMERS);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < CLAIMERS; i++) {
                OutboxStore on = i % 2 == 0 ? store() : secondStore();
                String owner = "tck-claimer-" + i;
                futures.add(
                        pool.submit(
                                () -> {
                                    go.await();
                                    worker.run(on, owner);
                                    return null;
                                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(2, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The claims of racing claimers that take turns with completions, and when they may stop. A
     * claim that comes back empty proves nothing while another claim runs: a store may hold a
     * claimable row locked while it decides about it ({@code FOR UPDATE SKIP LOCKED} of a claim
     * that then finds the row blocked and leaves it), and the other claimer skips it. So a claimer
     * that found nothing and knows of no message in flight claims once more alone, with no other
     * claim running: if that claim is empty too, nothing is left that the store would hand out, and
     * every claimer stops.
     */
    private final class Claims {
        private final ReadWriteLock turns = new ReentrantReadWriteLock(true);
        private final AtomicInteger inFlight = new AtomicInteger();
        private final Instant at;
        private final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        private volatile boolean drained;

        /** Claims at {@code at} (the kit's clock once the messages are enqueued). */
        Claims(Instant at) {
            this.at = at;
        }

        /**
         * The next deliveries for {@code owner} (1-hour leases), after empty claims while others
         * hold what is left; empty when the claimer stops: nothing is left, the race already broke
         * the contract, or 60 s passed (a violation that says how far the claimers got, {@code
         * done}).
         */
        List<Delivery> next(OutboxStore on, String owner, int limit, Supplier<String> done) {
            while (violations.size() < MAX_VIOLATIONS && !drained) {
                if (System.nanoTime() > deadline) {
                    violation(owner + " gave up after 60 s with " + done.get());
                    return List.of();
                }
                List<Delivery> got =
                        claim(on, new ClaimRequest(owner, at, Duration.ofHours(1), limit));
                if (!got.isEmpty()) {
                    return got;
                }
                letOthersRun();
            }
            return List.of();
        }

        /**
         * Claims beside the other claimers; after an empty claim with nothing in flight, claims
         * once more alone. The deliveries count as in flight until {@link #finished}.
         */
        private List<Delivery> claim(OutboxStore on, ClaimRequest request) {
            List<Delivery> got = claimHolding(turns.readLock(), on, request);
            if (!got.isEmpty() || inFlight.get() != 0) {
                return got;
            }
            Lock alone = turns.writeLock();
            alone.lock();
            try {
                if (drained || inFlight.get() != 0) {
                    return List.of();
                }
                got = on.claim(request);
                inFlight.addAndGet(got.size());
                drained = got.isEmpty();
                return got;
            } finally {
                alone.unlock();
            }
        }

        private List<Delivery> claimHolding(Lock turn, OutboxStore on, ClaimRequest request) {
            turn.lock();
            try {
                List<Delivery> got = on.claim(request);
                inFlight.addAndGet(got.size()); // before another claimer may claim alone
                return got;
            } finally {
                turn.unlock();
            }
        }

        /**
         * Counts deliveries as no longer in flight: completed, released or abandoned, or kept for
         * good (leases that outlast the race, whose messages cannot come back in it).
         */
        void finished(int deliveries) {
            inFlight.addAndGet(-deliveries);
        }
    }

    @Test
    @DisplayName(
            "claimers racing on two store instances never share a message, and every message is claimed once")
    void required_concurrentClaimersNeverShareAMessage() throws Exception {
        List<Message> all = enqueueMany();
        Map<String, String> holder = new ConcurrentHashMap<>();
        AtomicInteger handedOut = new AtomicInteger();
        Claims claims = new Claims(now());
        race(
                (on, owner) -> {
                    while (handedOut.get() <= 2 * all.size()) {
                        List<Delivery> got =
                                claims.next(
                                        on,
                                        owner,
                                        25,
                                        () ->
                                                holder.size()
                                                        + " of "
                                                        + all.size()
                                                        + " messages claimed");
                        if (got.isEmpty()) {
                            return;
                        }
                        handedOut.addAndGet(got.size());
                        for (Delivery d : got) {
                            hold(holder, d.message().id(), owner);
                        }
                        claims.finished(got.size()); // kept: they do not come back in this race
                    }
                });
        assertRace(
                "with 1-hour leases; a message must never be handed to two live leases, but your"
                        + " store did so",
                all,
                holder.keySet(),
                "claimed exactly once by the racing claimers, but your store never handed out");
    }

    @Test
    @DisplayName(
            "claimers that complete and release concurrently lose nothing and finish each message once")
    void required_concurrentClaimCompleteAndReleaseLoseNothing() throws Exception {
        List<Message> all = enqueueMany();
        Instant at = now();
        Map<String, String> holder = new ConcurrentHashMap<>();
        Set<String> completed = ConcurrentHashMap.newKeySet();
        Set<String> releasedOnce = ConcurrentHashMap.newKeySet();
        Claims claims = new Claims(at);
        race(
                (on, owner) -> {
                    while (true) {
                        List<Delivery> got =
                                claims.next(
                                        on,
                                        owner,
                                        10,
                                        () ->
                                                completed.size()
                                                        + " of "
                                                        + all.size()
                                                        + " messages completed");
                        if (got.isEmpty()) {
                            return;
                        }
                        List<String> toComplete = new ArrayList<>();
                        for (Delivery d : got) {
                            String id = d.message().id();
                            hold(holder, id, owner);
                            if (completed.contains(id)) {
                                violation(
                                        "'"
                                                + id
                                                + "' was handed to "
                                                + owner
                                                + " after it was completed");
                            }
                            if (Math.floorMod(id.hashCode(), 4) == 0 && releasedOnce.add(id)) {
                                holder.remove(id, owner);
                                if (!on.release(
                                        new Release(
                                                owner,
                                                d.receipt(),
                                                at,
                                                "tck: simulated failure"))) {
                                    violation(
                                            "release by "
                                                    + owner
                                                    + " of its live lease on '"
                                                    + id
                                                    + "' was reported stale");
                                }
                                claims.finished(1);
                            } else {
                                toComplete.add(d.receipt());
                            }
                        }
                        if (!toComplete.isEmpty()) {
                            Set<String> stale = on.complete(new Completion(owner, toComplete));
                            if (!stale.isEmpty()) {
                                violation(
                                        "complete by "
                                                + owner
                                                + " of "
                                                + toComplete.size()
                                                + " live leases reported "
                                                + stale.size()
                                                + " stale");
                            }
                            for (Delivery d : got) {
                                if (toComplete.contains(d.receipt())
                                        && !completed.add(d.message().id())) {
                                    violation("'" + d.message().id() + "' was completed twice");
                                }
                            }
                            claims.finished(toComplete.size());
                        }
                    }
                });
        assertRace(
                "completing (and releasing a quarter of them) concurrently; your store broke the"
                        + " contract",
                all,
                completed,
                "completed exactly once, but your store never handed out again or lost");
    }

    /**
     * Asserts that racing claimers saw no violation (the race described by {@code race}) and that
     * every message of {@code all} is in {@code done} ({@code doneMeans}: what must have happened
     * to each, and what the store did instead).
     */
    private void assertRace(String race, List<Message> all, Set<String> done, String doneMeans) {
        assertThat(violations)
                .as(
                        "%d claimers raced over %d messages %s: %s",
                        CLAIMERS, all.size(), race, violations)
                .isEmpty();
        List<String> lost = idsOf(all).stream().filter(id -> !done.contains(id)).limit(10).toList();
        assertThat(done)
                .as(
                        "every one of the %d messages must be %s %d of them (first: %s)%s",
                        all.size(),
                        doneMeans,
                        all.size() - done.size(),
                        lost,
                        skewHint(done.isEmpty()))
                .hasSize(all.size());
    }

    @Test
    @DisplayName(
            "claimers racing on two store instances hand out each key's messages in enqueue order, to one holder at a time")
    void required_concurrentClaimersKeepPerKeyOrder() throws Exception {
        int count = Math.max(200, concurrencyMessageCount() / 4);
        int keys = 20;
        Map<String, List<String>> order = new HashMap<>();
        List<Message> all = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String key = clock.idPrefix() + "race-" + (i % keys);
            Message m = message().key(key).payload("keyed " + i).build();
            all.add(m);
            order.computeIfAbsent(key, k -> new ArrayList<>()).add(m.id());
        }
        for (int from = 0; from < count; from += 100) {
            enqueueCommitted(all.subList(from, Math.min(count, from + 100)));
        }
        syncWithWallClock();
        Instant at = now();
        Object lock = new Object();
        Map<String, Integer> next = new HashMap<>();
        Map<String, String> holder = new HashMap<>();
        Set<String> releasedOnce = ConcurrentHashMap.newKeySet();
        AtomicInteger finished = new AtomicInteger();
        Claims claims = new Claims(at);
        race(
                (on, owner) -> {
                    while (finished.get() < count) {
                        List<Delivery> got =
                                claims.next(
                                        on,
                                        owner,
                                        7,
                                        () ->
                                                finished.get()
                                                        + " of "
                                                        + count
                                                        + " messages completed (a key stayed"
                                                        + " blocked)");
                        if (got.isEmpty()) {
                            return;
                        }
                        Map<String, List<Delivery>> byKey = new LinkedHashMap<>();
                        for (Delivery d : got) {
                            byKey.computeIfAbsent(
                                            d.message().key().orElse("(none)"),
                                            k -> new ArrayList<>())
                                    .add(d);
                        }
                        synchronized (lock) {
                            for (Map.Entry<String, List<Delivery>> e : byKey.entrySet()) {
                                String key = e.getKey();
                                List<String> ids = ids(e.getValue());
                                String previous = holder.put(key, owner);
                                if (previous != null) {
                                    violation(
                                            owner
                                                    + " was handed "
                                                    + ids
                                                    + " of key "
                                                    + key
                                                    + " while "
                                                    + previous
                                                    + " held an earlier message of that key");
                                }
                                List<String> keyOrder = order.getOrDefault(key, List.of());
                                int from = Math.min(next.getOrDefault(key, 0), keyOrder.size());
                                List<String> expected =
                                        keyOrder.subList(
                                                from, Math.min(keyOrder.size(), from + ids.size()));
                                if (!expected.equals(ids)) {
                                    violation(
                                            owner
                                                    + " was handed "
                                                    + ids
                                                    + " of key "
                                                    + key
                                                    + ", but the next of that key in enqueue"
                                                    + " order were "
                                                    + expected);
                                }
                            }
                        }
                        List<String> toComplete = new ArrayList<>();
                        List<Release> toRelease = new ArrayList<>();
                        List<String> toAbandon = new ArrayList<>();
                        // bookkeeping before the store writes: another claimer can get the key
                        // only after them
                        synchronized (lock) {
                            for (Map.Entry<String, List<Delivery>> e : byKey.entrySet()) {
                                List<Delivery> ofKey = e.getValue();
                                String headId = ofKey.get(0).message().id();
                                holder.remove(e.getKey());
                                if (Math.floorMod(headId.hashCode(), 3) == 0
                                        && releasedOnce.add(headId)) {
                                    toRelease.add(
                                            new Release(
                                                    owner,
                                                    ofKey.get(0).receipt(),
                                                    at,
                                                    "tck: simulated failure"));
                                    for (Delivery d : ofKey.subList(1, ofKey.size())) {
                                        toAbandon.add(d.receipt());
                                    }
                                } else {
                                    ofKey.forEach(d -> toComplete.add(d.receipt()));
                                    next.merge(e.getKey(), ofKey.size(), Integer::sum);
                                    finished.addAndGet(ofKey.size());
                                }
                            }
                        }
                        for (Release r : toRelease) {
                            if (!on.release(r)) {
                                violation("release by " + owner + " of a live lease was stale");
                            }
                        }
                        if (!toAbandon.isEmpty()
                                && !on.abandon(new Abandonment(owner, toAbandon)).isEmpty()) {
                            violation("abandon by " + owner + " of live leases was stale");
                        }
                        if (!toComplete.isEmpty()
                                && !on.complete(new Completion(owner, toComplete)).isEmpty()) {
                            violation("complete by " + owner + " of live leases was stale");
                        }
                        claims.finished(got.size());
                    }
                });
        assertThat(violations)
                .as(
                        "%d claimers raced over %d messages of %d keys (releasing a third of the"
                                + " heads once and abandoning what they held behind them); a key's"
                                + " messages must be handed out in enqueue order and never to two"
                                + " holders at once, but your store broke that: %s",
                        CLAIMERS, count, keys, violations)
                .isEmpty();
        assertThat(finished.get())
                .as(
                        "every one of the %d keyed messages must be completed, but %d were: the"
                                + " claimers stopped when nothing was leased and nothing more was"
                                + " claimable%s",
                        count, finished.get(), skewHint(finished.get() == 0))
                .isEqualTo(count);
    }

    /** One racing claimer's loop. */
    @FunctionalInterface
    private interface Worker {
        void run(OutboxStore on, String owner) throws Exception;
    }
}
