package io.outbox4j.api;

import java.time.Duration;

/**
 * Maps a failed attempt to the minimum delay before the next one. It must be deterministic: the
 * relay adds its own random spread of 0–50 % on top, never less.
 */
@FunctionalInterface
public interface Backoff {
    /** The default: exponential from 1 second, capped at 10 minutes. */
    Backoff DEFAULT = exponential(Duration.ofSeconds(1), Duration.ofMinutes(10));

    /**
     * Returns the minimum delay after the given failed attempt.
     *
     * @param attempt the 1-based attempt that failed
     * @return the delay, zero or positive
     */
    Duration delay(int attempt);

    /**
     * Doubles the delay after each attempt: {@code base}, {@code 2×base}, {@code 4×base}… up to
     * {@code max}. The computation cannot overflow, whatever the attempt.
     *
     * @param base the delay after the first attempt, positive
     * @param max the largest delay, at least {@code base}
     * @return the backoff
     */
    static Backoff exponential(Duration base, Duration max) {
        Checks.positive(base, "base");
        Checks.positive(max, "max");
        if (max.compareTo(base) < 0) {
            throw new IllegalArgumentException(
                    "max must be >= base (" + base + "), but was " + max);
        }
        return attempt -> {
            Checks.atLeast(attempt, 1, "attempt");
            Duration d = base;
            for (int i = 1; i < attempt && d.compareTo(max) < 0; i++) {
                d = d.compareTo(max.dividedBy(2)) > 0 ? max : d.multipliedBy(2);
            }
            return d.compareTo(max) > 0 ? max : d;
        };
    }

    /**
     * Waits the same delay after every attempt.
     *
     * @param delay the delay, zero or positive
     * @return the backoff
     */
    static Backoff fixed(Duration delay) {
        Checks.notNull(delay, "delay");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, but was " + delay);
        }
        return attempt -> delay;
    }
}
