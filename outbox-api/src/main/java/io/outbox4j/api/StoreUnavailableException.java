package io.outbox4j.api;

import org.jspecify.annotations.Nullable;

/**
 * A store could not do what it was asked: the database or server is unreachable, a call timed out
 * or was interrupted, the server refused or failed the operation, or the outbox's table or
 * collection is missing. Nothing is known to have changed for the caller; the same call may succeed
 * later. The message names the operation and the outbox, and the driver's own error is the cause.
 */
public class StoreUnavailableException extends OutboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what could not be done, and why
     */
    public StoreUnavailableException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what could not be done, and why
     * @param cause the driver's or server's own error
     */
    public StoreUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
