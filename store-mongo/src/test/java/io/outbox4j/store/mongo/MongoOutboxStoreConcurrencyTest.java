package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/**
 * Two store instances, each on its own {@code MongoClient} (as two relay processes would be), each
 * driven by two threads, claim from one collection at once: no message is handed to two live
 * leases, none is lost, and with keys no two claimers ever hold messages of one key at the same
 * time and every key is handed out in enqueue order, through releases and abandons.
 */
class MongoOutboxStoreConcurrencyTest {
    private static final int STORES = 2;
    private static final int THREADS_PER_STORE = 2;
    private static final int CLAIMERS = STORES * THREADS_PER_STORE;
    private static final Duration DEADLINE = Duration.ofMinutes(3);

    @Test
    void twoThreadsOnEachOfTwoStores_shareNoMessageAndLoseNone() throws Exception {
        int messages = 3000;
        String collection = Mongo.freshCollection("concurrency");
        MongoOutboxStore first = Mongo.indexedStore(collection);
        MongoOutboxStore second = Mongo.store(Mongo.secondClient(), collection);
        List<Message> all = new ArrayList<>(messages);
        for (int i = 0; i < messages; i++) {
            all.add(
                    Message.builder()
                            .id("c-" + i)
                            .topic("load")
                            .module("test")
                            .payload("payload " + i)
                            .build());
        }
        for (int from = 0; from < messages; from += 1000) {
            Mongo.enqueueCommitted(first, Mongo.client(), all.subList(from, from + 1000));
        }
        Instant at = Instant.now().plusSeconds(1).truncatedTo(ChronoUnit.MICROS);

        Map<String, String> holder = new ConcurrentHashMap<>();
        List<String> violations = Collections.synchronizedList(new ArrayList<>());
        run(
                i -> {
                    MongoOutboxStore store = i % STORES == 0 ? first : second;
                    String owner = "relay-" + i;
                    while (violations.isEmpty()) {
                        List<Delivery> got =
                                store.claim(new ClaimRequest(owner, at, Duration.ofHours(1), 100));
                        if (got.isEmpty()) {
                            return;
                        }
                        List<String> receipts = new ArrayList<>();
                        for (Delivery d : got) {
                            String previous = holder.putIfAbsent(d.message().id(), owner);
                            if (previous != null) {
                                violations.add(
                                        d.message().id()
                                                + " handed to "
                                                + owner
                                                + " while "
                                                + previous
                                                + " held it");
                            }
                            receipts.add(d.receipt());
                        }
                        if (!store.complete(new Completion(owner, receipts)).isEmpty()) {
                            violations.add(owner + " found a live receipt stale");
                        }
                    }
                });

        assertThat(violations).as("no message may be handed to two live leases").isEmpty();
        assertThat(holder).as("every message is claimed exactly once").hasSize(messages);
        assertThat(first.collection().countDocuments()).as("every message is completed").isZero();
        assertThat(holder.values())
                .as("both store instances took part")
                .anyMatch(owner -> owner.equals("relay-0") || owner.equals("relay-2"))
                .anyMatch(owner -> owner.equals("relay-1") || owner.equals("relay-3"));
    }

    /**
     * 20 keys of 30 messages each plus 60 unkeyed ones, claimed 12 at a time by four claimers. A
     * claimer releases about one delivery in ten (once per message; due again at once) and then
     * abandons the later deliveries of that key in its batch, as a relay does. Checked at every
     * hand-out: no other claimer holds a message of that key, and every earlier message of the key
     * is completed or comes before it in the same claim.
     */
    @Test
    void keyedMessages_neverHeldByTwoClaimersAtOnce_andHandedOutInEnqueueOrder() throws Exception {
        int keys = 20;
        int perKey = 30;
        int unkeyed = 60;
        String collection = Mongo.freshCollection("keyed");
        MongoOutboxStore first = Mongo.indexedStore(collection);
        MongoOutboxStore second = Mongo.store(Mongo.secondClient(), collection);
        List<Message> all = new ArrayList<>();
        for (int n = 0; n < perKey; n++) {
            for (int k = 0; k < keys; k++) {
                all.add(
                        Message.builder()
                                .id("k" + k + "-" + n)
                                .key("k" + k)
                                .topic("orders")
                                .module("test")
                                .build());
            }
            for (int u = 0; u < unkeyed / perKey; u++) {
                all.add(
                        Message.builder()
                                .id("u-" + n + "." + u)
                                .topic("audit")
                                .module("test")
                                .build());
            }
        }
        for (int from = 0; from < all.size(); from += 100) {
            Mongo.enqueueCommitted(
                    first, Mongo.client(), all.subList(from, Math.min(all.size(), from + 100)));
        }
        int total = all.size();
        Instant at = Instant.now().plusSeconds(1).truncatedTo(ChronoUnit.MICROS);

        Map<String, String> keyHolder = new ConcurrentHashMap<>();
        Map<String, Set<Integer>> completed = new ConcurrentHashMap<>();
        Set<String> releasedOnce = ConcurrentHashMap.newKeySet();
        Set<String> done = ConcurrentHashMap.newKeySet();
        AtomicInteger parkedAtSomePoint = new AtomicInteger();
        List<String> violations = Collections.synchronizedList(new ArrayList<>());
        long deadline = System.nanoTime() + DEADLINE.toNanos() / 2;
        run(
                i -> {
                    MongoOutboxStore store = i % STORES == 0 ? first : second;
                    String owner = "relay-" + i;
                    int claimNo = 0;
                    while (violations.isEmpty() && done.size() < total) {
                        if (System.nanoTime() > deadline) {
                            violations.add(
                                    owner + " ran out of time with " + done.size() + " done");
                            return;
                        }
                        String claim = owner + "#" + claimNo++;
                        List<Delivery> got =
                                store.claim(new ClaimRequest(owner, at, Duration.ofHours(1), 12));
                        if (got.isEmpty()) {
                            TimeUnit.MILLISECONDS.sleep(2);
                            continue;
                        }
                        if (store.collection().countDocuments(BsonDocument.parse("{parked: true}"))
                                > 0) {
                            parkedAtSomePoint.incrementAndGet();
                        }
                        Map<String, List<Integer>> inThisClaim = new java.util.HashMap<>();
                        for (Delivery d : got) {
                            String id = d.message().id();
                            if (d.message().key().isEmpty()) {
                                continue;
                            }
                            String key = d.message().key().get();
                            String held = keyHolder.putIfAbsent(key, claim);
                            if (held != null && !held.equals(claim)) {
                                violations.add(
                                        id
                                                + " handed to "
                                                + claim
                                                + " while "
                                                + held
                                                + " held key "
                                                + key);
                            }
                            int n = Integer.parseInt(id.substring(id.indexOf('-') + 1));
                            List<Integer> before =
                                    inThisClaim.computeIfAbsent(key, k -> new ArrayList<>());
                            Set<Integer> finished = completed.getOrDefault(key, Set.of());
                            for (int j = 0; j < n; j++) {
                                if (!finished.contains(j) && !before.contains(j)) {
                                    violations.add(
                                            id
                                                    + " handed out while "
                                                    + key
                                                    + "-"
                                                    + j
                                                    + " was neither completed nor earlier in the claim");
                                    break;
                                }
                            }
                            before.add(n);
                        }
                        // Publish in claim order: one failure per message at most, its key's
                        // later deliveries of this batch are abandoned, the rest completed.
                        List<String> complete = new ArrayList<>();
                        List<Delivery> completedDeliveries = new ArrayList<>();
                        List<String> abandon = new ArrayList<>();
                        Set<String> failedKeys = new HashSet<>();
                        Delivery failed = null;
                        for (Delivery d : got) {
                            String key = d.message().key().orElse(null);
                            if (key != null && failedKeys.contains(key)) {
                                abandon.add(d.receipt());
                            } else if (failed == null
                                    && ThreadLocalRandom.current().nextInt(10) == 0
                                    && releasedOnce.add(d.message().id())) {
                                failed = d;
                                if (key != null) {
                                    failedKeys.add(key);
                                }
                            } else {
                                complete.add(d.receipt());
                                completedDeliveries.add(d);
                            }
                        }
                        // Give the keys up before the store does: afterwards anyone may take them.
                        for (Delivery d : got) {
                            d.message().key().ifPresent(k -> keyHolder.remove(k, claim));
                        }
                        for (Delivery d : completedDeliveries) {
                            d.message()
                                    .key()
                                    .ifPresent(
                                            k -> {
                                                String id = d.message().id();
                                                completed
                                                        .computeIfAbsent(
                                                                k,
                                                                x -> ConcurrentHashMap.newKeySet())
                                                        .add(
                                                                Integer.parseInt(
                                                                        id.substring(
                                                                                id.indexOf('-')
                                                                                        + 1)));
                                            });
                        }
                        if (!complete.isEmpty()
                                && !store.complete(new Completion(owner, complete)).isEmpty()) {
                            violations.add(claim + " found a live receipt stale on complete");
                        }
                        completedDeliveries.forEach(d -> done.add(d.message().id()));
                        if (failed != null
                                && !store.release(
                                        new Release(owner, failed.receipt(), at, "failed once"))) {
                            violations.add(claim + " found a live receipt stale on release");
                        }
                        if (!abandon.isEmpty()
                                && !store.abandon(new Abandonment(owner, abandon)).isEmpty()) {
                            violations.add(claim + " found a live receipt stale on abandon");
                        }
                    }
                });

        assertThat(violations).as("per-key order and exclusivity").isEmpty();
        assertThat(done).as("every message is completed").hasSize(total);
        assertThat(first.collection().countDocuments()).as("nothing is left").isZero();
        assertThat(releasedOnce).as("some deliveries failed once").isNotEmpty();
        assertThat(parkedAtSomePoint.get())
                .as("claims met keys held by other claimers and parked their messages")
                .isPositive();
    }

    private interface Claimer {
        void run(int index) throws Exception;
    }

    private static void run(Claimer claimer) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CLAIMERS);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        for (int i = 0; i < CLAIMERS; i++) {
            int index = i;
            workers.add(
                    pool.submit(
                            () -> {
                                go.await();
                                claimer.run(index);
                                return null;
                            }));
        }
        go.countDown();
        try {
            for (Future<?> w : workers) {
                w.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
