package io.outbox4j.store.mongo;

import java.time.Instant;

/**
 * Instants as epoch microseconds, the precision a {@link io.outbox4j.api.Message} keeps. A BSON
 * date keeps only milliseconds, so the store writes 64-bit integers instead: what is stored is
 * exactly what is read back.
 */
final class Micros {
    private static final long PER_SECOND = 1_000_000L;

    private Micros() {}

    /**
     * Converts an instant that must round-trip exactly (a message timestamp).
     *
     * @throws IllegalArgumentException if it lies outside the range of a 64-bit microsecond count
     */
    static long exact(Instant instant, String field) {
        try {
            return Math.addExact(
                    Math.multiplyExact(instant.getEpochSecond(), PER_SECOND),
                    instant.getNano() / 1000);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(
                    field
                            + " "
                            + instant
                            + " is outside the range the MongoDB store keeps (about 292,000 years either side of 1970)",
                    e);
        }
    }

    /** An instant rounded down to the microsecond (the enqueue time), held at the range's ends. */
    static long floor(Instant instant) {
        return Nanos.heldCount(instant.getEpochSecond(), instant.getNano() / 1000, PER_SECOND);
    }

    /** Converts a stored microsecond count back to an instant. */
    static Instant toInstant(long micros) {
        return Instant.ofEpochSecond(
                Math.floorDiv(micros, PER_SECOND), Math.floorMod(micros, PER_SECOND) * 1000L);
    }
}
