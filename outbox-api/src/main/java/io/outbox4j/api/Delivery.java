package io.outbox4j.api;

import java.time.Instant;

/**
 * A leased message, as returned by {@link OutboxStore#claim}: the message, the store-owned receipt
 * that proves the lease, and the 1-based attempt number (1 on the first claim, 2 after one lease
 * expired or was released, and so on), and when the message entered the outbox.
 *
 * @param message the leased message
 * @param receipt an opaque, store-owned token identifying this lease; never shown to observers
 * @param attempt the 1-based delivery attempt (attempts given back by {@link OutboxStore#abandon}
 *     are not counted)
 * @param enqueuedAt when the store accepted the message (its clock, microsecond precision); with
 *     the publish time it gives the commit-to-publish latency
 */
public record Delivery(Message message, String receipt, int attempt, Instant enqueuedAt) {
    /**
     * Validates the delivery.
     *
     * @param message the message
     * @param receipt the receipt
     * @param attempt the attempt
     * @param enqueuedAt the enqueue time
     * @throws IllegalArgumentException if the message or receipt is missing or the attempt is below
     *     1
     */
    public Delivery {
        Checks.notNull(message, "message");
        Checks.text(receipt, "receipt", 512);
        Checks.atLeast(attempt, 1, "attempt");
        Checks.notNull(enqueuedAt, "enqueuedAt");
    }

    /** Describes the delivery without the receipt, so it is safe to log. */
    @Override
    public String toString() {
        return "Delivery[" + message + ", attempt=" + attempt + ", enqueuedAt=" + enqueuedAt + "]";
    }
}
