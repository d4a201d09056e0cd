package io.outbox4j.api;

import java.time.Instant;

/**
 * Parks a leased message that must not be retried: it is never claimed again, and the store keeps
 * the reason and the attempt count for operators.
 *
 * @param owner the owner that claimed the message
 * @param receipt the receipt of that claim
 * @param reason why the message was given up (at most {@value Release#MAX_ERROR_LENGTH} characters;
 *     longer text is cut)
 * @param at when the message was given up
 */
public record DeadLetter(String owner, String receipt, String reason, Instant at) {
    /**
     * Validates the dead letter and cuts an over-long reason.
     *
     * @param owner the owner
     * @param receipt the receipt
     * @param reason the reason
     * @param at the at
     * @throws IllegalArgumentException if a field is missing or the reason is blank
     */
    public DeadLetter {
        Checks.text(owner, "owner", 255);
        Checks.text(receipt, "receipt", 512);
        Checks.notNull(reason, "reason");
        if (reason.isBlank()) {
            throw new IllegalArgumentException("reason must not be blank");
        }
        reason = Release.cut(reason);
        Checks.notNull(at, "at");
    }
}
