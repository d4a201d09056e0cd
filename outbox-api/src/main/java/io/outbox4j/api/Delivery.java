package io.outbox4j.api;

/**
 * A leased message, as returned by {@link OutboxStore#claim}: the message, the store-owned receipt
 * that proves the lease, and the 1-based attempt number (1 on the first claim, 2 after one lease
 * expired or was released, and so on).
 *
 * @param message the leased message
 * @param receipt an opaque, store-owned token identifying this lease; never shown to observers
 * @param attempt the 1-based delivery attempt
 */
public record Delivery(Message message, String receipt, int attempt) {
    /**
     * Validates the delivery.
     *
     * @param message the message
     * @param receipt the receipt
     * @param attempt the attempt
     * @throws IllegalArgumentException if the message or receipt is missing or the attempt is below
     *     1
     */
    public Delivery {
        Checks.notNull(message, "message");
        Checks.text(receipt, "receipt", 512);
        Checks.atLeast(attempt, 1, "attempt");
    }

    /** Describes the delivery without the receipt, so it is safe to log. */
    @Override
    public String toString() {
        return "Delivery[" + message + ", attempt=" + attempt + "]";
    }
}
