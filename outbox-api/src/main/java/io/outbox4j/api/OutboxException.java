package io.outbox4j.api;

/**
 * The one unchecked root of every exception outbox4j throws on purpose. Catch it to handle any
 * outbox failure; catch a subtype where a specific reaction makes sense.
 */
public class OutboxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with a message.
     *
     * @param message what went wrong, for a human
     */
    public OutboxException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a message and a cause.
     *
     * @param message what went wrong, for a human
     * @param cause the underlying failure
     */
    public OutboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
