package io.outbox4j.api;

import java.time.Instant;

/**
 * Clears a lease after a failed delivery and makes the message claimable again no earlier than
 * {@code availableAt}.
 *
 * @param owner the owner that claimed the message
 * @param receipt the receipt of that claim
 * @param availableAt the earliest instant the message may be claimed again
 * @param error a short description of the failure, kept by the store for operators (at most {@value
 *     #MAX_ERROR_LENGTH} characters; longer text is cut)
 */
public record Release(String owner, String receipt, Instant availableAt, String error) {
    /** The longest error text a store has to keep. */
    public static final int MAX_ERROR_LENGTH = 2000;

    /**
     * Validates the release and cuts an over-long error text.
     *
     * @param owner the owner
     * @param receipt the receipt
     * @param availableAt the available at
     * @param error the error
     * @throws IllegalArgumentException if a field is missing
     */
    public Release {
        Checks.text(owner, "owner", 255);
        Checks.text(receipt, "receipt", 512);
        Checks.notNull(availableAt, "availableAt");
        error = cut(Checks.notNull(error, "error"));
    }

    static String cut(String text) {
        return text.length() <= MAX_ERROR_LENGTH ? text : text.substring(0, MAX_ERROR_LENGTH);
    }
}
