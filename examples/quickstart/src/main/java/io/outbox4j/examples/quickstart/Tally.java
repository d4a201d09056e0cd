package io.outbox4j.examples.quickstart;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the consumer saw: distinct ids, duplicates, and per-key order. Events of one key carry an
 * increasing per-key sequence number; a first delivery with a number lower than one already seen
 * for its key is an order violation (a redelivered duplicate is counted as a duplicate, not as a
 * violation).
 */
final class Tally {
    private final Map<String, Boolean> seen = new ConcurrentHashMap<>();
    private final Map<String, Long> lastSeqByKey = new ConcurrentHashMap<>();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicLong violations = new AtomicLong();

    /** Records one event read back from the broker. Called from consumer threads. */
    void record(String id, String key, long keySeq) {
        if (id.startsWith(Quickstart.WARM_UP)) {
            return; // warm-up events are left out of the figures
        }
        received.incrementAndGet();
        if (seen.putIfAbsent(id, Boolean.TRUE) != null) {
            duplicates.incrementAndGet();
            return;
        }
        lastSeqByKey.merge(
                key,
                keySeq,
                (previous, current) -> {
                    if (current < previous) {
                        violations.incrementAndGet();
                        return previous;
                    }
                    return current;
                });
    }

    long distinct() {
        return seen.size();
    }

    long received() {
        return received.get();
    }

    long duplicates() {
        return duplicates.get();
    }

    long violations() {
        return violations.get();
    }

    boolean saw(String id) {
        return seen.containsKey(id);
    }
}
