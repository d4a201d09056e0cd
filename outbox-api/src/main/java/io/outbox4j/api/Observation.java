package io.outbox4j.api;

import java.time.Duration;
import java.util.Optional;

/**
 * Bounded metadata about one delivery attempt, for metrics and logs. It never carries the payload,
 * the headers or the receipt.
 *
 * @param topic the message topic
 * @param module the message module
 * @param attempt the 1-based attempt
 * @param duration how long publishing took
 * @param outcome what became of the attempt
 * @param error why the attempt failed, if it did
 * @param publisherThrewError whether the publisher threw a {@link java.lang.Error} (it is rethrown
 *     after the lease is released)
 */
public record Observation(
        String topic,
        String module,
        int attempt,
        Duration duration,
        Outcome outcome,
        Optional<Throwable> error,
        boolean publisherThrewError) {

    /**
     * Validates the observation.
     *
     * @param topic the topic
     * @param module the module
     * @param attempt the attempt
     * @param duration the duration
     * @param outcome the outcome
     * @param error the error
     * @param publisherThrewError the publisher threw error
     * @throws IllegalArgumentException if a field is missing
     */
    public Observation {
        Checks.notNull(topic, "topic");
        Checks.notNull(module, "module");
        Checks.atLeast(attempt, 1, "attempt");
        Checks.notNull(duration, "duration");
        Checks.notNull(outcome, "outcome");
        Checks.notNull(error, "error");
    }

    /** What became of a delivery attempt. */
    public enum Outcome {
        /**
         * Published, but the completion could not be recorded: the message will be delivered again.
         */
        PUBLISHED,
        /** Published and completed: the message is gone from the outbox. */
        COMPLETED,
        /** Not published; released for a later retry. */
        RELEASED,
        /** Not published and given up: parked in the dead letter. */
        DEAD_LETTERED,
        /**
         * The outcome could not be recorded because the lease had expired and was claimed again.
         */
        STALE
    }
}
