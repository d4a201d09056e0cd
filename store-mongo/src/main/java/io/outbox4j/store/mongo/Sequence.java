package io.outbox4j.store.mongo;

import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands out the {@code seq} values that order messages enqueued at the same availability time: a
 * hybrid clock, {@code max(previous + 1, wall clock in microseconds)}, shared by every store of the
 * JVM.
 *
 * <p>Within one JVM the values strictly increase in enqueue order, whatever the threads, and they
 * never go back when the wall clock does. Across processes they follow the wall clock, so the order
 * of two messages enqueued by different processes within the same instant is arbitrary — as it is
 * for their commits. No round trip to the server is needed and, unlike a counter document updated
 * inside the caller's transaction, no two enqueuing transactions ever conflict on a shared document
 * (in MongoDB such a conflict aborts one of them).
 */
final class Sequence {
    private static final AtomicLong LAST = new AtomicLong();
    private static final Clock WALL = Clock.systemUTC();

    private Sequence() {}

    /**
     * Reserves {@code count} consecutive values.
     *
     * @return the first of them
     */
    static long reserve(int count) {
        while (true) {
            long previous = LAST.get();
            long first = Math.max(previous + 1, Micros.floor(WALL.instant()));
            if (LAST.compareAndSet(previous, first + count - 1)) {
                return first;
            }
        }
    }
}
