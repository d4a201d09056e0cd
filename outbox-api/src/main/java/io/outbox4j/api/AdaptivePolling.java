package io.outbox4j.api;

import java.time.Duration;

/**
 * Adaptive polling (docs/engine.md): the idle wait of a claim loop after each claim. After a claim
 * that found messages it is {@link #FIRST_WAIT} (or the poll interval, if shorter); it doubles with
 * every claim that finds none until it is the poll interval again. So a loop that no wake-up
 * reaches (another process than the writer's, on a store without cross-process wake-ups) finds
 * messages within milliseconds while they flow, and polls at its interval when the outbox is quiet.
 *
 * <p>Used by the engine's relay and the Kafka Connect task; a hand-written relay loop on the ports
 * can use it the same way.
 */
@Incubating
public final class AdaptivePolling {
    /** The idle wait after a claim that found messages. */
    public static final Duration FIRST_WAIT = Duration.ofMillis(10);

    private AdaptivePolling() {}

    /**
     * The idle wait after a claim.
     *
     * @param previous the idle wait after the claim before (the poll interval before the first)
     * @param pollInterval the longest idle wait, positive
     * @param found whether this claim found messages
     * @return the idle wait, between the smaller of {@link #FIRST_WAIT} and {@code pollInterval},
     *     and {@code pollInterval}
     * @throws IllegalArgumentException if {@code previous} or {@code pollInterval} is null, or
     *     {@code pollInterval} is not positive
     */
    public static Duration next(Duration previous, Duration pollInterval, boolean found) {
        if (previous == null || pollInterval == null) {
            throw new IllegalArgumentException(
                    "previous and pollInterval must not be null, but were "
                            + previous
                            + " and "
                            + pollInterval);
        }
        if (pollInterval.isNegative() || pollInterval.isZero()) {
            throw new IllegalArgumentException(
                    "pollInterval must be positive, but was " + pollInterval);
        }
        if (found) {
            return FIRST_WAIT.compareTo(pollInterval) < 0 ? FIRST_WAIT : pollInterval;
        }
        return previous.compareTo(pollInterval.dividedBy(2)) < 0
                ? previous.multipliedBy(2)
                : pollInterval;
    }
}
