package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Two store instances, each on its own {@code MongoClient} (as two relay processes would be), each
 * driven by two threads, drain 10 000 messages with 1-hour leases: no message is handed to two
 * claimers, none is lost, and the collection ends empty.
 */
class MongoOutboxStoreConcurrencyTest {
    private static final int MESSAGES = 10_000;
    private static final int STORES = 2;
    private static final int THREADS_PER_STORE = 2;
    private static final int BATCH = 200;

    @Test
    void twoThreadsOnEachOfTwoStores_shareNoMessageAndLoseNone() throws Exception {
        String collection = Mongo.freshCollection("concurrency");
        MongoOutboxStore first = Mongo.store(Mongo.client(), collection);
        MongoOutboxStore second = Mongo.store(Mongo.secondClient(), collection);
        first.createIndexes();
        List<Message> all = new ArrayList<>(MESSAGES);
        for (int i = 0; i < MESSAGES; i++) {
            all.add(
                    Message.builder()
                            .id("c-" + i)
                            .topic("load")
                            .module("test")
                            .payload("payload " + i)
                            .build());
        }
        for (int from = 0; from < MESSAGES; from += 1000) {
            Mongo.enqueueCommitted(first, Mongo.client(), all.subList(from, from + 1000));
        }
        Instant at = Instant.now().plusSeconds(1);

        Map<String, String> holder = new ConcurrentHashMap<>();
        List<String> violations = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger claims = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(STORES * THREADS_PER_STORE);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> workers = new ArrayList<>();
        long started = System.nanoTime();
        for (int i = 0; i < STORES * THREADS_PER_STORE; i++) {
            MongoOutboxStore store = i % STORES == 0 ? first : second;
            String owner = "relay-" + i;
            workers.add(
                    pool.submit(
                            () -> {
                                go.await();
                                while (violations.isEmpty()) {
                                    List<Delivery> got =
                                            store.claim(
                                                    new ClaimRequest(
                                                            owner, at, Duration.ofHours(1), BATCH));
                                    if (got.isEmpty()) {
                                        return null;
                                    }
                                    claims.incrementAndGet();
                                    List<String> receipts = new ArrayList<>();
                                    for (Delivery d : got) {
                                        String previous =
                                                holder.putIfAbsent(d.message().id(), owner);
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
                                    if (!store.complete(new Completion(owner, receipts))
                                            .isEmpty()) {
                                        violations.add(owner + " found a live receipt stale");
                                    }
                                }
                                return null;
                            }));
        }
        go.countDown();
        try {
            for (Future<?> w : workers) {
                w.get(3, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf(
                "%d messages claimed and completed by %d claimers in %d claims, %.1f s, %.0f msg/s%n",
                MESSAGES, STORES * THREADS_PER_STORE, claims.get(), seconds, MESSAGES / seconds);

        assertThat(violations).as("no message may be handed to two live leases").isEmpty();
        assertThat(holder).as("every message is claimed exactly once").hasSize(MESSAGES);
        assertThat(first.collection().countDocuments()).as("every message is completed").isZero();
        assertThat(holder.values())
                .as("both store instances took part")
                .anyMatch(owner -> owner.equals("relay-0") || owner.equals("relay-2"))
                .anyMatch(owner -> owner.equals("relay-1") || owner.equals("relay-3"));
    }
}
