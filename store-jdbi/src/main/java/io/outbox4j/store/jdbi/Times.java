package io.outbox4j.store.jdbi;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * Instants as the tables store them: microseconds, between the years 1000 and 9999 (the narrowest
 * range of the dialects' timestamp types).
 */
final class Times {
    static final Instant MIN = Instant.parse("1000-01-01T00:00:00Z");
    static final Instant MAX = Instant.parse("9999-12-31T23:59:59.999999Z");

    private Times() {}

    /**
     * An instant a lease decision compares with: rounded up to the next microsecond and clamped.
     * Every such instant is rounded alike (now, lease end, retry time), so a message released until
     * t is due at a claim at t, and never at the microsecond before.
     */
    static Instant decision(Instant t) {
        Instant floor = t.truncatedTo(ChronoUnit.MICROS);
        return clamp(floor.equals(t) ? t : floor.plusNanos(1000));
    }

    /** An instant that is recorded, not compared with: truncated to microseconds and clamped. */
    static Instant record(Instant t) {
        return clamp(t.truncatedTo(ChronoUnit.MICROS));
    }

    static boolean storable(Instant t) {
        return !t.isBefore(MIN) && !t.isAfter(MAX);
    }

    private static Instant clamp(Instant t) {
        return t.isBefore(MIN) ? MIN : t.isAfter(MAX) ? MAX : t;
    }
}
