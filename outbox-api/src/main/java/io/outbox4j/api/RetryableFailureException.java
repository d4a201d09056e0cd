package io.outbox4j.api;

import org.jspecify.annotations.Nullable;

/**
 * A publish failure that a later attempt may fix: the broker is unreachable, did not confirm in
 * time, refused the message for now (a nack, throttling), the destination does not exist yet, or
 * the publisher is closed. The relay releases the message and retries it after the configured
 * {@link Backoff}. Publishers report transport errors as this type (or as a {@link
 * PermanentFailureException} when no retry can help), with the transport's own error as the cause,
 * so a caller never has to know a driver's exception types.
 */
public class RetryableFailureException extends OutboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates a retryable failure.
     *
     * @param message what failed, for a human
     */
    public RetryableFailureException(String message) {
        super(message);
    }

    /**
     * Creates a retryable failure with its cause.
     *
     * @param message what failed, for a human
     * @param cause the transport's own error
     */
    public RetryableFailureException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
