package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two store instances (two connection pools, like two application nodes) with two claiming threads
 * each race over 20 000 messages on a real server: no message may be leased to two claimers, none
 * may be lost.
 */
abstract class ConcurrentClaimTest {
    private static final int MESSAGES = 20_000;
    private static final int BATCH = 50;

    /** Returns a new {@code Jdbi}, with its own pool, over the database under test. */
    abstract Jdbi newJdbi();

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void twoStoresTimesTwoThreads_neverShareAMessage_andLoseNone() throws Exception {
        Jdbi writer = newJdbi();
        JdbiOutboxStore[] stores = {
            JdbiOutboxStore.builder(writer).tableName("outbox_race").build(),
            JdbiOutboxStore.builder(newJdbi()).tableName("outbox_race").build()
        };
        stores[0].createSchemaIfAbsent();
        writer.useHandle(h -> h.execute(stores[0].sql().deleteAll));
        List<Message> all =
                IntStream.range(0, MESSAGES)
                        .mapToObj(
                                i ->
                                        Message.builder()
                                                .id("race-" + i)
                                                .topic("race")
                                                .module("test")
                                                .payload("p" + i)
                                                .build())
                        .collect(Collectors.toList());
        for (int from = 0; from < MESSAGES; from += 1000) {
            List<Message> batch = all.subList(from, from + 1000);
            writer.useTransaction(h -> stores[0].enqueueAll(h, batch));
        }

        Map<String, String> claimedBy = new ConcurrentHashMap<>();
        Set<String> sharedIds = ConcurrentHashMap.newKeySet();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        long start = System.nanoTime();
        List<Future<Integer>> workers = new ArrayList<>();
        for (int s = 0; s < 2; s++) {
            for (int t = 0; t < 2; t++) {
                JdbiOutboxStore store = stores[s];
                String owner = "store" + s + "-thread" + t;
                workers.add(
                        pool.submit(
                                () -> {
                                    int claims = 0;
                                    while (true) {
                                        // A lease far longer than the test: a message can only come
                                        // back if two claims overlap.
                                        List<Delivery> got =
                                                store.claim(
                                                        new ClaimRequest(
                                                                owner,
                                                                Instant.now().plusSeconds(1),
                                                                Duration.ofMinutes(30),
                                                                BATCH));
                                        if (got.isEmpty()) {
                                            return claims;
                                        }
                                        claims++;
                                        for (Delivery d : got) {
                                            String before =
                                                    claimedBy.putIfAbsent(d.message().id(), owner);
                                            if (before != null) {
                                                sharedIds.add(
                                                        d.message().id()
                                                                + " ("
                                                                + before
                                                                + " and "
                                                                + owner
                                                                + ")");
                                            }
                                        }
                                        Set<String> stale =
                                                store.complete(
                                                        new Completion(
                                                                owner,
                                                                got.stream()
                                                                        .map(Delivery::receipt)
                                                                        .toList()));
                                        assertThat(stale).as("completes of %s", owner).isEmpty();
                                    }
                                }));
            }
        }
        int claims = 0;
        for (Future<Integer> w : workers) {
            claims += w.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        pool.shutdown();

        assertThat(sharedIds).as("messages leased to two claimers at once").isEmpty();
        assertThat(claimedBy).as("every message claimed once").hasSize(MESSAGES);
        assertThat(
                        stores[1].claim(
                                new ClaimRequest(
                                        "late",
                                        Instant.now().plus(Duration.ofHours(1)),
                                        Duration.ofMinutes(1),
                                        10)))
                .as("nothing left")
                .isEmpty();
        long owners = claimedBy.values().stream().distinct().count();
        assertThat(owners).as("all four claimers took part").isEqualTo(4);
        System.out.printf(
                "%s: %d messages in %d claims of <= %d by 4 claimers in %.2f s: %d msg/s claimed+completed%n",
                getClass().getSimpleName(),
                MESSAGES,
                claims,
                BATCH,
                seconds,
                Math.round(MESSAGES / seconds));
    }
}
