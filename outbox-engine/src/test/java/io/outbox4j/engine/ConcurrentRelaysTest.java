package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Message;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Four relays on one store: 10 000 messages over 100 keys, 2 % of first attempts failing. Every
 * message is published at least once, completed exactly once, none is left, and no relay ever has
 * one key in two concurrent calls. Across relays, per-key exclusion is not promised (a relay can
 * claim a key's next message while another still publishes the previous one); the test reports how
 * often that happened.
 */
class ConcurrentRelaysTest {
    @Test
    void fourRelays_tenThousandMessages_hundredKeys_eachCompletedExactlyOnce() {
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
        long started = System.nanoTime();
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
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

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
        long republished =
                publishedPerId.values().stream()
                        .mapToInt(AtomicInteger::get)
                        .filter(n -> n > 1)
                        .count();
        System.out.printf(
                "4 relays, 10000 messages, 100 keys: %d ms (%.0f msgs/s); calls per relay %s; "
                        + "republished %d; releases %d; same-key overlaps across relays %d%n",
                millis,
                10_000 * 1000.0 / millis,
                publishers.stream().map(p -> p.calls.get()).toList(),
                republished,
                store.releases.size(),
                acrossRelays.overlaps.size());
    }
}
