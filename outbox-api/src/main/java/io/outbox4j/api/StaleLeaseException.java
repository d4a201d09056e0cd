package io.outbox4j.api;

/**
 * A lease is no longer the caller's: it ran out (or could not be renewed in time) and the message
 * may have been claimed by someone else. Stores report stale receipts as return values, never by
 * throwing; this type names the reason where a stale lease ends a delivery, for example in the
 * {@link Observation#error()} of an {@link Observation.Outcome#STALE} message.
 */
public class StaleLeaseException extends OutboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which lease was lost, and what became of its message
     */
    public StaleLeaseException(String message) {
        super(message);
    }
}
