package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two store instances (two connection pools, like two application nodes) with two claiming threads
 * each race over messages on a real server: no message may be leased to two claimers, none may be
 * lost, and a key's messages are handed out one holder at a time, in enqueue order.
 */
abstract class ConcurrentClaimTest {
    private static final int MESSAGES = 20_000;
    private static final int KEYED_MESSAGES = 6_000;
    private static final int KEYS = 60;
    private static final int BATCH = 50;
    private static final int CLAIMERS = 4;

    /** Returns a new {@code Jdbi}, with its own pool, over the database under test. */
    abstract Jdbi newJdbi();

    private JdbiOutboxStore[] stores(String table) {
        Jdbi writer = newJdbi();
        JdbiOutboxStore[] stores = {
            JdbiOutboxStore.builder(writer).tableName(table).build(),
            JdbiOutboxStore.builder(newJdbi()).tableName(table).build()
        };
        stores[0].createSchemaIfAbsent();
        writer.useHandle(h -> h.execute(stores[0].sql().deleteAll));
        return stores;
    }

    private static void enqueue(JdbiOutboxStore store, Jdbi jdbi, List<Message> all) {
        for (int from = 0; from < all.size(); from += 1000) {
            List<Message> batch = all.subList(from, Math.min(all.size(), from + 1000));
            jdbi.useTransaction(h -> store.enqueueAll(h, batch));
        }
    }

    /** One claimer's loop: claims until a claim comes back empty while nothing is in flight. */
    @FunctionalInterface
    private interface Claimer {
        void run(JdbiOutboxStore store, String owner) throws Exception;
    }

    private static List<String> race(JdbiOutboxStore[] stores, Claimer claimer) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CLAIMERS);
        List<Future<?>> workers = new ArrayList<>();
        List<String> owners = new ArrayList<>();
        for (int s = 0; s < 2; s++) {
            for (int t = 0; t < CLAIMERS / 2; t++) {
                JdbiOutboxStore store = stores[s];
                String owner = "store" + s + "-thread" + t;
                owners.add(owner);
                workers.add(
                        pool.submit(
                                () -> {
                                    claimer.run(store, owner);
                                    return null;
                                }));
            }
        }
        try {
            for (Future<?> w : workers) {
                w.get();
            }
        } finally {
            pool.shutdownNow();
        }
        return owners;
    }

    private static ClaimRequest claimRequest(String owner) {
        // A lease far longer than the test: a message can only come back if two claims overlap.
        return new ClaimRequest(owner, Instant.now().plusSeconds(1), Duration.ofMinutes(30), BATCH);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void twoStoresTimesTwoThreads_neverShareAMessage_andLoseNone() throws Exception {
        JdbiOutboxStore[] stores = stores("outbox_race");
        Jdbi writer = newJdbi();
        enqueue(
                stores[0],
                writer,
                IntStream.range(0, MESSAGES)
                        .mapToObj(
                                i ->
                                        Message.builder()
                                                .id("race-" + i)
                                                .topic("race")
                                                .module("test")
                                                .payload("p" + i)
                                                .build())
                        .collect(Collectors.toList()));

        Map<String, String> claimedBy = new ConcurrentHashMap<>();
        Set<String> sharedIds = ConcurrentHashMap.newKeySet();
        race(
                stores,
                (store, owner) -> {
                    while (true) {
                        List<Delivery> got = store.claim(claimRequest(owner));
                        if (got.isEmpty()) {
                            return;
                        }
                        for (Delivery d : got) {
                            String before = claimedBy.putIfAbsent(d.message().id(), owner);
                            if (before != null) {
                                sharedIds.add(
                                        d.message().id() + " (" + before + " and " + owner + ")");
                            }
                        }
                        assertThat(store.complete(new Completion(owner, receipts(got))))
                                .as("stale receipts in a completion of %s", owner)
                                .isEmpty();
                    }
                });

        assertThat(sharedIds).as("messages leased to two claimers at once").isEmpty();
        assertThat(claimedBy).as("every message claimed once").hasSize(MESSAGES);
        assertThat(stores[1].claim(claimRequest("late"))).as("nothing left").isEmpty();
        assertThat(claimedBy.values().stream().distinct().count())
                .as("all four claimers took part")
                .isEqualTo(CLAIMERS);
    }

    /**
     * Keyed messages, with a third of the batches failing: the head of each key in such a batch is
     * released (due again at once) and the rest of that key abandoned, so keys get blocked, their
     * followers parked and unparked while four claimers race.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void twoStoresTimesTwoThreads_neverHoldTwoMessagesOfAKeyAtOnce_andHandEachKeyOutInOrder()
            throws Exception {
        JdbiOutboxStore[] stores = stores("outbox_key_race");
        Map<String, List<String>> order = new HashMap<>();
        List<Message> all = new ArrayList<>();
        for (int i = 0; i < KEYED_MESSAGES; i++) {
            String key = "key-" + (i % KEYS);
            Message m =
                    Message.builder()
                            .id("keyed-" + i)
                            .topic("race")
                            .module("test")
                            .key(key)
                            .payload("p" + i)
                            .build();
            all.add(m);
            order.computeIfAbsent(key, k -> new ArrayList<>()).add(m.id());
        }
        enqueue(stores[0], newJdbi(), all);

        Object lock = new Object();
        Map<String, String> holder = new HashMap<>();
        Map<String, Integer> next = new HashMap<>();
        List<String> violations = new ArrayList<>();
        AtomicInteger completed = new AtomicInteger();
        AtomicInteger batches = new AtomicInteger();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        Map<String, AtomicInteger> claimsByOwner = new ConcurrentHashMap<>();
        race(
                stores,
                (store, owner) -> {
                    // Every claimer runs until all are completed: an empty claim only means that
                    // the others hold every key with due messages for now.
                    while (completed.get() < KEYED_MESSAGES && System.nanoTime() < deadline) {
                        List<Delivery> got = store.claim(claimRequest(owner));
                        if (got.isEmpty()) {
                            Thread.sleep(1);
                            continue;
                        }
                        claimsByOwner
                                .computeIfAbsent(owner, o -> new AtomicInteger())
                                .incrementAndGet();
                        Map<String, List<Delivery>> byKey = new LinkedHashMap<>();
                        for (Delivery d : got) {
                            byKey.computeIfAbsent(
                                            d.message().key().orElseThrow(), k -> new ArrayList<>())
                                    .add(d);
                        }
                        boolean fail = batches.incrementAndGet() % 3 == 0;
                        List<String> toComplete = new ArrayList<>();
                        List<String> toAbandon = new ArrayList<>();
                        List<Release> toRelease = new ArrayList<>();
                        synchronized (lock) {
                            for (Map.Entry<String, List<Delivery>> e : byKey.entrySet()) {
                                String key = e.getKey();
                                List<String> ids =
                                        e.getValue().stream().map(d -> d.message().id()).toList();
                                String previous = holder.put(key, owner);
                                if (previous != null) {
                                    violations.add(
                                            owner + " got " + ids + " while " + previous + " held "
                                                    + key);
                                }
                                List<String> keyOrder = order.get(key);
                                int from = next.getOrDefault(key, 0);
                                List<String> expected =
                                        keyOrder.subList(
                                                from, Math.min(keyOrder.size(), from + ids.size()));
                                if (!expected.equals(ids)) {
                                    violations.add(
                                            owner + " got " + ids + ", expected " + expected);
                                }
                            }
                            // Bookkeeping before the store writes: another claimer can get a key
                            // only after them.
                            for (Map.Entry<String, List<Delivery>> e : byKey.entrySet()) {
                                List<Delivery> ofKey = e.getValue();
                                holder.remove(e.getKey());
                                if (fail) {
                                    Delivery head = ofKey.get(0);
                                    toRelease.add(
                                            new Release(
                                                    owner, head.receipt(), Instant.now(), "down"));
                                    ofKey.subList(1, ofKey.size())
                                            .forEach(d -> toAbandon.add(d.receipt()));
                                } else {
                                    ofKey.forEach(d -> toComplete.add(d.receipt()));
                                    next.merge(e.getKey(), ofKey.size(), Integer::sum);
                                    completed.addAndGet(ofKey.size());
                                }
                            }
                        }
                        for (Release r : toRelease) {
                            assertThat(store.release(r)).as("release of a live lease").isTrue();
                        }
                        if (!toAbandon.isEmpty()) {
                            assertThat(store.abandon(new Abandonment(owner, toAbandon)))
                                    .as("stale receipts in an abandonment")
                                    .isEmpty();
                        }
                        if (!toComplete.isEmpty()) {
                            assertThat(store.complete(new Completion(owner, toComplete)))
                                    .as("stale receipts in a completion")
                                    .isEmpty();
                        }
                    }
                });

        assertThat(violations).as("keys held twice or handed out of order").isEmpty();
        assertThat(completed.get())
                .as("keyed messages completed within 90 s (the others stayed blocked)")
                .isEqualTo(KEYED_MESSAGES);
        assertThat(stores[1].claim(claimRequest("late"))).as("nothing left").isEmpty();
        assertThat(claimsByOwner.keySet())
                .as("claimers that took part")
                .anyMatch(o -> o.startsWith("store0"))
                .anyMatch(o -> o.startsWith("store1"));
        long rowsLeft =
                newJdbi()
                        .withHandle(
                                h ->
                                        h.createQuery(
                                                        "SELECT COUNT(*) FROM "
                                                                + stores[0].sql().table)
                                                .mapTo(Long.class)
                                                .one());
        assertThat(rowsLeft).as("rows left in the table").isZero();
    }

    private static List<String> receipts(List<Delivery> deliveries) {
        return deliveries.stream().map(Delivery::receipt).toList();
    }
}
