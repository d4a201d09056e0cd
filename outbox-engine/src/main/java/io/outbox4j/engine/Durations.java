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
        if (d.toSeconds() >= MAX_WAIT_NANOS / 1_000_000_000L) {
            return MAX_WAIT_NANOS;
        }
        return d.toNanos();
    }

    /**
     * The one text form of a duration in messages and logs: {@code 250ms}, {@code 3.705s}, {@code
     * 30s}, {@code 2m30s}, {@code 63m}, rounded to the millisecond (below half a millisecond:
     * {@code 400ns}); the ISO form only past a hundred years. JSON carries ISO-8601 ({@link
     * Duration#toString()}) instead.
     */
    static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        if (d.isZero()) {
            return "0s";
        }
        if (d.toSeconds() > 100L * 365 * 24 * 3600) {
            return d.toString();
        }
        long millis = d.toMillis() + (d.toNanosPart() % 1_000_000 >= 500_000 ? 1 : 0);
        if (millis == 0) {
            return d.toNanos() + "ns";
        }
        if (millis < 1000) {
            return millis + "ms";
        }
        StringBuilder text = new StringBuilder();
        long minutes = millis / 60_000;
        long rest = millis % 60_000;
        if (minutes > 0) {
            text.append(minutes).append('m');
        }
        if (rest > 0) {
            text.append(rest / 1000);
            if (rest % 1000 != 0) {
                String fraction = String.format("%03d", rest % 1000);
                text.append('.').append(fraction.replaceAll("0+$", ""));
            }
            text.append('s');
        }
        return text.toString();
    }
}
