package io.outbox4j.api;

import java.time.Instant;

/**
 * A dead letter as an operator sees it.
 *
 * @param message the message, as enqueued
 * @param reason why it was given up
 * @param attempts how many real tries were made
 * @param enqueuedAt when the store accepted it
 * @param deadAt when it was given up
 */
public record DeadMessage(
        Message message, String reason, int attempts, Instant enqueuedAt, Instant deadAt) {
    /**
     * Validates.
     *
     * @param message the message
     * @param reason the reason
     * @param attempts the attempts
     * @param enqueuedAt the enqueue time
     * @param deadAt the dead-letter time
     * @throws IllegalArgumentException if a field is missing or attempts negative
     */
    public DeadMessage {
        Checks.notNull(message, "message");
        Checks.notNull(reason, "reason");
        if (attempts < 0) {
            throw new IllegalArgumentException("attempts must be >= 0, but was " + attempts);
        }
        Checks.notNull(enqueuedAt, "enqueuedAt");
        Checks.notNull(deadAt, "deadAt");
    }

    /** Describes the dead letter without payload or header values, so it is safe to log. */
    @Override
    public String toString() {
        return "DeadMessage[id="
                + message.id()
                + ", topic="
                + message.topic()
                + ", attempts="
                + attempts
                + ", deadAt="
                + deadAt
                + "]";
    }
}
