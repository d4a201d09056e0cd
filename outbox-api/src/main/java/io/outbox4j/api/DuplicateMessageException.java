package io.outbox4j.api;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by {@link Outbox#enqueue} when a message with the same id is already in the outbox, and by
 * {@link Outbox#enqueueAll} also when one id appears twice in the batch ({@link #twiceInOneBatch}).
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
    public DuplicateMessageException(String messageId, @Nullable Throwable cause) {
        super(text(messageId, "is already in the outbox"), cause);
        this.messageId = messageId;
    }

    private DuplicateMessageException(String messageId, String what) {
        super(text(messageId, what));
        this.messageId = messageId;
    }

    private static String text(String messageId, String what) {
        return "message id '" + messageId + "' " + what + "; ids must be unique";
    }

    /**
     * The exception for an id that appears twice in one {@link Outbox#enqueueAll} batch (nothing of
     * the batch was enqueued).
     *
     * @param messageId the id given twice
     * @return the exception
     */
    public static DuplicateMessageException twiceInOneBatch(String messageId) {
        return new DuplicateMessageException(
                messageId, "appears twice in one batch, which was not enqueued");
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
