package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Message;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Four relays on one store: 10 000 messages over 100 keys, 2 % of first attempts failing. Every
 * message is published at least once, completed exactly once, none is left; no key is ever in two
 * concurrent calls, within one relay or across relays (the store never leases two messages of one
 * key at once), and each key's messages are first published in enqueue order.
 */
class ConcurrentRelaysTest {
    @Test
    void fourRelays_tenThousandMessages_hundredKeys_eachCompletedExactlyOnce_inKeyOrder() {
        InMemoryOutboxStore memory = new InMemoryOutboxStore();
        RecordingStore store = new RecordingStore(memory);
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            messages.add(Fixtures.message("m" + i, "key-" + (i % 100)));
        }
        memory.enqueueCommitted(messages);

        Map<String, AtomicInteger> publishedPerId = new ConcurrentHashMap<>();
        KeyTrackingPublisher acrossRelays = new KeyTrackingPublisher(0);
        List<KeyTrackingPublisher> publishers = new ArrayList<>();
        List<Relay> relays = new ArrayList<>();
        try {
            for (int r = 0; r < 4; r++) {
                KeyTrackingPublisher publisher =
                        new KeyTrackingPublisher(200_000, 0.02, acrossRelays, publishedPerId);
                publishers.add(publisher);
                Relay relay =
                        Relay.builder(store, publisher)
                                .owner("relay-" + r)
                                .batchSize(50)
                                .workers(4)
                                .deliveryTimeout(Duration.ofSeconds(5))
                                .backoff(Backoff.fixed(Duration.ZERO))
                                .maxAttempts(100)
                                .pollInterval(Duration.ofMillis(20))
                                .build();
                relays.add(relay);
                relay.start();
            }
            Fixtures.await("the outbox is empty", Duration.ofSeconds(45), () -> memory.size() == 0);
        } finally {
            relays.forEach(Relay::close);
        }
        assertThat(publishedPerId).as("every message published at least once").hasSize(10_000);
        assertThat(store.completedPerId).as("every message completed").hasSize(10_000);
        assertThat(store.completedPerId.values())
                .as("completed exactly once")
                .allSatisfy(c -> assertThat(c.get()).isEqualTo(1));
        assertThat(memory.size()).isZero();
        for (KeyTrackingPublisher p : publishers) {
            assertThat(p.overlaps).as("same-key overlap inside one relay").isEmpty();
            assertThat(p.calls.get()).as("every relay took part").isPositive();
        }
        assertThat(acrossRelays.overlaps).as("same-key overlap across relays").isEmpty();
        Map<String, List<Integer>> firstSeenPerKey = new HashMap<>();
        for (String id : acrossRelays.firstPublished) {
            int n = Integer.parseInt(id.substring(1));
            firstSeenPerKey.computeIfAbsent("key-" + (n % 100), k -> new ArrayList<>()).add(n);
        }
        assertThat(firstSeenPerKey).hasSize(100);
        firstSeenPerKey.forEach(
                (key, order) -> assertThat(order).as("first publications of %s", key).isSorted());
    }
}
