package io.outbox4j.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Bounded metadata about what became of one claimed message in one batch, for metrics and logs:
 * which message (id, key, topic, module, enqueue time), which attempt, how long publishing took,
 * and the outcome. It never carries the payload, the headers or the receipt.
 *
 * <p>With {@link #enqueuedAt()} and the time the observer is called, an observer computes the
 * commit-to-publish latency of a {@link Outcome#COMPLETED} message.
 *
 * @param messageId the message id (the downstream idempotency key)
 * @param key the message key, or empty for a message without one
 * @param topic the message topic
 * @param module the message module
 * @param enqueuedAt when the store accepted the message (its {@link Delivery#enqueuedAt()})
 * @param attempt the 1-based attempt of this claim; for {@link Outcome#ABANDONED} the attempt it
 *     would have been (it is given back and not counted)
 * @param duration how long the publisher call that carried the message took; zero when the message
 *     was never handed to the publisher
 * @param outcome what became of the message
 * @param error why the message was not published, if it was not
 * @param publisherThrewError whether the publisher threw a {@link java.lang.Error} (it is rethrown
 *     after the batch's outcomes are recorded)
 */
public record Observation(
        String messageId,
        Optional<String> key,
        String topic,
        String module,
        Instant enqueuedAt,
        int attempt,
        Duration duration,
        Outcome outcome,
        Optional<Throwable> error,
        boolean publisherThrewError) {

    /**
     * Validates the observation.
     *
     * @param messageId the message id
     * @param key the key
     * @param topic the topic
     * @param module the module
     * @param enqueuedAt the enqueue time
     * @param attempt the attempt
     * @param duration the duration
     * @param outcome the outcome
     * @param error the error
     * @param publisherThrewError the publisher threw error
     * @throws IllegalArgumentException if a field is missing
     */
    public Observation {
        Checks.notNull(messageId, "messageId");
        Checks.notNull(key, "key");
        Checks.notNull(topic, "topic");
        Checks.notNull(module, "module");
        Checks.notNull(enqueuedAt, "enqueuedAt");
        Checks.atLeast(attempt, 1, "attempt");
        Checks.notNull(duration, "duration");
        Checks.notNull(outcome, "outcome");
        Checks.notNull(error, "error");
    }

    /**
     * Builds the observation of a delivery, taking the message's id, key, topic, module and the
     * delivery's enqueue time and attempt.
     *
     * @param delivery the claimed delivery (its receipt is not kept)
     * @param duration how long the publisher call took, zero if there was none
     * @param outcome what became of the message
     * @param error why it was not published, if it was not
     * @param publisherThrewError whether the publisher threw a {@link java.lang.Error}
     * @return the observation
     */
    public static Observation of(
            Delivery delivery,
            Duration duration,
            Outcome outcome,
            Optional<Throwable> error,
            boolean publisherThrewError) {
        Message m = delivery.message();
        return new Observation(
                m.id(),
                m.key(),
                m.topic(),
                m.module(),
                delivery.enqueuedAt(),
                delivery.attempt(),
                duration,
                outcome,
                error,
                publisherThrewError);
    }

    /** What became of a claimed message; each name means one thing. */
    public enum Outcome {
        /** Published, and the completion was recorded: the message is gone from the outbox. */
        COMPLETED,
        /**
         * Published, but the completion could not be recorded (the store failed): the message will
         * be delivered again once its lease ends.
         */
        PUBLISHED_NOT_RECORDED,
        /**
         * Handed to the publisher, not published, and released for a later retry; the attempt is
         * counted.
         */
        RELEASED,
        /** Not published and given up: parked as a dead letter (the attempt is counted). */
        DEAD_LETTERED,
        /**
         * Never handed to the publisher (held back behind a failed message of its key, not started
         * before shutdown, or its lease could no longer be proven): given back to the store, which
         * takes the attempt back; due again at once, in its old place.
         */
        ABANDONED,
        /**
         * Not published, and what to do with it could not be recorded (the release, dead letter or
         * abandon write failed): the message comes back once its lease ends, with this attempt
         * counted.
         */
        NOT_RECORDED,
        /**
         * The relay had lost the lease (it ended and the message was claimed again, or was finished
         * elsewhere): nothing this relay did was recorded. {@link #error()} is empty if the
         * publisher had accepted the message; a message whose lease renewal came back stale was not
         * handed to the publisher.
         */
        STALE
    }
}
