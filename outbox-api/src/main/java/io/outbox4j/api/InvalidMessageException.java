package io.outbox4j.api;

import org.jspecify.annotations.Nullable;

/**
 * A message that a transport can never take as it is: larger than the broker accepts, a field over
 * the transport's own limit, characters it refuses. It is a {@link PermanentFailureException}: no
 * retry can fix it, so the relay dead-letters the message at once. (A {@link Message} that breaks
 * the API's own rules is refused earlier, when it is built, with an {@link
 * IllegalArgumentException}.)
 */
public class InvalidMessageException extends PermanentFailureException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which message, and what the transport cannot take
     */
    public InvalidMessageException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message which message, and what the transport cannot take
     * @param cause the transport's own error
     */
    public InvalidMessageException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
