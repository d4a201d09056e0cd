package io.outbox4j.engine;

import java.time.Duration;

/** Duration helpers: human-readable text for messages, saturated nanoseconds for waits. */
final class Durations {
    /**
     * Longer waits are cut to this (about 73 years), so that adding to {@code System.nanoTime()} is
     * safe.
     */
    static final long MAX_WAIT_NANOS = Long.MAX_VALUE / 4;

    private Durations() {}

    /** Nanoseconds of {@code d}, at least 0 and at most {@link #MAX_WAIT_NANOS}. */
    static long nanos(Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        if (d.getSeconds() >= MAX_WAIT_NANOS / 1_000_000_000L) {
            return MAX_WAIT_NANOS;
        }
        return d.toNanos();
    }

    /**
     * Short text such as {@code 30s}, {@code 63m}, {@code 2m30s}, {@code 250ms}; the ISO form when
     * finer.
     */
    static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        if (d.isZero()) {
            return "0s";
        }
        if (d.getNano() % 1_000_000 != 0 || d.getSeconds() > 100L * 365 * 24 * 3600) {
            return d.toString();
        }
        long minutes = d.toMinutes();
        long seconds = d.toSecondsPart();
        long millis = d.toMillisPart();
        StringBuilder text = new StringBuilder();
        if (minutes > 0) {
            text.append(minutes).append('m');
        }
        if (seconds > 0) {
            text.append(seconds).append('s');
        }
        if (millis > 0) {
            text.append(millis).append("ms");
        }
        return text.toString();
    }
}
