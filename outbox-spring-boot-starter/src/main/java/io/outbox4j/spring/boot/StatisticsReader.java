package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import java.time.Clock;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Reads the store's statistics for health and the endpoint, reusing one reading for a short while
 * so frequent health probes do not each count the whole outbox.
 */
final class StatisticsReader {
    private final OutboxAdmin admin;
    private final Clock clock;
    private final long ttlNanos;
    private @Nullable OutboxStatistics last;
    private long readAt;

    StatisticsReader(OutboxAdmin admin, Clock clock, Duration ttl) {
        this.admin = admin;
        this.clock = clock;
        this.ttlNanos = ttl.toNanos();
    }

    /** A reading no older than the time to live; a store failure is thrown, never cached. */
    synchronized OutboxStatistics read() {
        long now = System.nanoTime();
        OutboxStatistics s = last;
        if (s != null && now - readAt < ttlNanos) {
            return s;
        }
        s = admin.statistics(clock.instant());
        last = s;
        readAt = now;
        return s;
    }

    /** A fresh reading (after a replay or discard). */
    synchronized OutboxStatistics readNow() {
        last = null;
        return read();
    }
}
