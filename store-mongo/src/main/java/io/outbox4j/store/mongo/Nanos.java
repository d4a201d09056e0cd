package io.outbox4j.store.mongo;

import java.time.Instant;

/**
 * Instants as epoch nanoseconds, for the fields a claim compares with its {@code now}: {@code
 * availableAt} (and {@code deadAt}, which operators filter by). A relay's clock and the times it
 * passes (lease ends, retry times) carry nanoseconds; keeping them exactly makes "due" mean exactly
 * {@code availableAt <= now}, neither early nor late by a fraction of a microsecond. The 64-bit
 * range covers the years 1677 to 2262; instants outside it are held at its ends (a message delayed
 * past 2262 becomes due when a claim's {@code now} is past 2262 too).
 */
final class Nanos {
    private static final long PER_SECOND = 1_000_000_000L;

    private Nanos() {}

    /** The instant in epoch nanoseconds, held at the ends of the 64-bit range. */
    static long of(Instant instant) {
        return heldCount(instant.getEpochSecond(), instant.getNano(), PER_SECOND);
    }

    /**
     * {@code seconds × perSecond + fraction} (a fraction of a second, {@code 0 <= fraction <
     * perSecond}), held at the ends of the 64-bit range instead of overflowing.
     */
    static long heldCount(long seconds, long fraction, long perSecond) {
        if (seconds > (Long.MAX_VALUE - fraction) / perSecond) {
            return Long.MAX_VALUE;
        }
        if (seconds < Long.MIN_VALUE / perSecond + 1) {
            return Long.MIN_VALUE;
        }
        return seconds * perSecond + fraction;
    }

    /** A microsecond count (the enqueue time) in nanoseconds, held at the ends of the range. */
    static long ofMicros(long micros) {
        if (micros > Long.MAX_VALUE / 1000) {
            return Long.MAX_VALUE;
        }
        if (micros < Long.MIN_VALUE / 1000) {
            return Long.MIN_VALUE;
        }
        return micros * 1000;
    }

    /** Converts a stored nanosecond count back to an instant. */
    static Instant toInstant(long nanos) {
        return Instant.ofEpochSecond(
                Math.floorDiv(nanos, PER_SECOND), Math.floorMod(nanos, PER_SECOND));
    }
}
