package io.outbox4j.store.mongo;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/** The random pause before the next round of a compare-and-set loop that lost a race. */
final class Pause {
    /** The longest pause: rounds back off exponentially from 1 ms up to this. */
    private static final long MAX_MILLIS = 16;

    private Pause() {}

    /**
     * Sleeps for a random time up to {@code min(16, 2^round)} ms, at least {@code
     * shortestPerMille}/1000 of that.
     *
     * @param interrupted the message of the failure thrown when the thread is interrupted (its
     *     interrupt flag is set again)
     */
    static void beforeRound(int round, int shortestPerMille, String interrupted) {
        long millis = Math.min(MAX_MILLIS, 1L << Math.min(round, 4));
        try {
            TimeUnit.MICROSECONDS.sleep(
                    ThreadLocalRandom.current()
                            .nextLong(millis * shortestPerMille, millis * 1000 + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failures.of(interrupted);
        }
    }
}
