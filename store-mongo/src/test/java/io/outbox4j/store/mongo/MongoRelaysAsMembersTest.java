package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import io.outbox4j.api.Backoff;
import io.outbox4j.api.Message;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Several relays as members of one MongoDB outbox, each with its own store instance (two on one
 * client, one on another, as relay processes would be): they split the buckets, a busy bucket of
 * one (parking under its bucket locks) and the completions of the others interleave without a
 * shared lock, one leaves and another joins mid-drain, and still every message is published, no
 * message is held by two relays at once, and every key's messages are first published in enqueue
 * order through retries.
 */
class MongoRelaysAsMembersTest {
    private static final int KEYS = 40;
    private static final int PER_KEY = 25;
    private static final int UNKEYED = 200;

    private final Map<String, String> inFlight = new ConcurrentHashMap<>();
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, List<Integer>> firstByKey = new ConcurrentHashMap<>();
    private final Set<String> published = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicInteger> byRelay = new ConcurrentHashMap<>();
    private String collection;

    @Test
    void threeMemberRelays_oneLeavesAndOneJoinsMidDrain_publishEveryMessage_inOrderPerKey() {
        collection = Mongo.freshCollection("members_relays");
        MongoOutboxStore writer = Mongo.indexedStore(collection);
        List<Message> messages = new ArrayList<>();
        for (int n = 0; n < PER_KEY; n++) {
            for (int k = 0; k < KEYS; k++) {
                messages.add(
                        Message.builder()
                                .id("k" + k + "-" + n)
                                .key("customer-" + k)
                                .topic("orders")
                                .module("shop")
                                .build());
            }
        }
        for (int u = 0; u < UNKEYED; u++) {
            messages.add(Message.builder().id("u-" + u).topic("audit").module("shop").build());
        }
        for (int from = 0; from < messages.size(); from += 500) {
            Mongo.enqueueCommitted(
                    writer,
                    Mongo.client(),
                    messages.subList(from, Math.min(messages.size(), from + 500)));
        }

        List<Relay> relays = new ArrayList<>();
        try {
            relays.add(relay("relay-a", Mongo.client()));
            relays.add(relay("relay-b", Mongo.secondClient()));
            relays.add(relay("relay-c", Mongo.client()));
            relays.forEach(Relay::start);

            waitFor(Duration.ofSeconds(60), () -> published.size() >= messages.size() / 3);
            relays.remove(0).close(); // relay-a leaves: its buckets go to the others at once
            Relay joiner = relay("relay-d", Mongo.secondClient());
            relays.add(joiner);
            joiner.start();

            waitFor(
                    Duration.ofMinutes(2),
                    () -> published.size() == messages.size() || !violations.isEmpty());
        } finally {
            relays.forEach(Relay::close);
        }

        assertThat(violations)
                .as("no message, and no key, published by two relays at once")
                .isEmpty();
        assertThat(published).hasSize(messages.size());
        assertThat(firstByKey.values())
                .as("each key's messages are first published in enqueue order, retries included")
                .allSatisfy(seqs -> assertThat(seqs).isSorted());
        assertThat(byRelay.keySet())
                .as("every member published: the buckets were split, and the joiner got some")
                .contains("relay-a", "relay-b", "relay-c", "relay-d");
        assertThat(writer.collection().countDocuments()).as("every message completed").isZero();
    }

    /**
     * Waits until the condition holds or the time is up (the assertions then say what is missing).
     */
    private static void waitFor(Duration atMost, BooleanSupplier condition) {
        try {
            Awaitility.await()
                    .dontCatchUncaughtExceptions()
                    .atMost(atMost)
                    .pollInterval(Duration.ofMillis(10))
                    .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            // the caller's assertions say what is missing
        }
    }

    /** A member relay on its own store instance, publishing through the counting publisher. */
    private Relay relay(String name, MongoClient client) {
        Publisher publisher =
                Publisher.perMessage(
                        m -> {
                            String key = m.key().orElse(null);
                            String other = inFlight.putIfAbsent(m.id(), name);
                            if (other != null) {
                                violations.add(
                                        m.id()
                                                + " published by "
                                                + name
                                                + " while "
                                                + other
                                                + " held it");
                            }
                            String slot = key == null ? null : "key:" + key;
                            String keyHolder =
                                    slot == null ? null : inFlight.putIfAbsent(slot, name);
                            if (keyHolder != null && !keyHolder.equals(name)) {
                                violations.add(
                                        key
                                                + " published by "
                                                + name
                                                + " while "
                                                + keyHolder
                                                + " published one of it");
                            }
                            try {
                                if (ThreadLocalRandom.current().nextInt(20) == 0) {
                                    throw new IllegalStateException("broker briefly unavailable");
                                }
                                if (key != null && published.add(m.id())) {
                                    firstByKey
                                            .computeIfAbsent(
                                                    key,
                                                    k ->
                                                            Collections.synchronizedList(
                                                                    new ArrayList<>()))
                                            .add(
                                                    Integer.parseInt(
                                                            m.id().substring(
                                                                            m.id().indexOf('-')
                                                                                    + 1)));
                                } else {
                                    published.add(m.id());
                                }
                                byRelay.computeIfAbsent(name, n -> new AtomicInteger())
                                        .incrementAndGet();
                            } finally {
                                inFlight.remove(m.id(), name);
                                if (slot != null) {
                                    inFlight.remove(slot, name);
                                }
                            }
                        });
        return Relay.builder(Mongo.store(client, collection), publisher)
                .owner(name)
                .batchSize(50)
                .workers(2)
                .memberLease(Duration.ofSeconds(2))
                .pollInterval(Duration.ofMillis(20))
                .backoff(Backoff.fixed(Duration.ZERO))
                .maxAttempts(100)
                .build();
    }
}
