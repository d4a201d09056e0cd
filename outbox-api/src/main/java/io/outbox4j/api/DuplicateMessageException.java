package io.outbox4j.api;

/**
 * Thrown by {@link Outbox#enqueue} when a message with the same id is already in the outbox.
 * Message ids are the downstream idempotency key and must be unique per outbox. The store never
 * commits or rolls back the caller's transaction itself: the caller decides what happens to it.
 * Stores keep the transaction usable where the database allows (the Jdbi store does, on every
 * dialect); MongoDB aborts a transaction after any rejected write, so there it can only be retried
 * from the start.
 */
public class DuplicateMessageException extends OutboxException {
    private static final long serialVersionUID = 1L;

    /** The id that was already present. */
    private final String messageId;

    /**
     * Creates the exception.
     *
     * @param messageId the id that was already present
     * @param cause the store's own error, if any (may be {@code null})
     */
    public DuplicateMessageException(String messageId, Throwable cause) {
        super("message id '" + messageId + "' is already in the outbox; ids must be unique", cause);
        this.messageId = messageId;
    }

    /**
     * Returns the id that was already present.
     *
     * @return the duplicate message id
     */
    public String messageId() {
        return messageId;
    }
}
