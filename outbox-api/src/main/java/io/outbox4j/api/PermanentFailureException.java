package io.outbox4j.api;

import org.jspecify.annotations.Nullable;

/**
 * A publish failure that must not be retried: the message goes straight to the dead letter. A
 * {@link Publisher} reports it (directly or as the cause of another exception) for errors that no
 * retry can fix, such as a record too large for the broker, an invalid destination or a refused
 * authorization.
 */
public class PermanentFailureException extends OutboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates a permanent failure.
     *
     * @param message why the message can never be published
     */
    public PermanentFailureException(String message) {
        super(message);
    }

    /**
     * Creates a permanent failure with its cause.
     *
     * @param message why the message can never be published
     * @param cause the transport's own error
     */
    public PermanentFailureException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
