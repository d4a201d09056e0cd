package io.outbox4j.api;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A retryable publish failure that carries the minimum delay before the next attempt, for example a
 * broker's throttling hint. The relay retries no earlier than this delay (it takes precedence over
 * the configured {@link Backoff}, but not over a permanent failure or exhausted attempts). It is a
 * {@link RetryableFailureException}, so code that handles retryable failures handles it too.
 */
public class RetryAfterException extends RetryableFailureException {
    private static final long serialVersionUID = 1L;

    /** The minimum delay before the next attempt. */
    private final Duration delay;

    /**
     * Creates the failure.
     *
     * @param message what failed
     * @param delay the minimum delay before retrying, zero or positive
     * @param cause the transport's own error, if any (may be {@code null})
     */
    public RetryAfterException(String message, Duration delay, @Nullable Throwable cause) {
        super(message, cause);
        Objects.requireNonNull(delay, "delay must not be null");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, but was " + delay);
        }
        this.delay = delay;
    }

    /**
     * Returns the minimum delay before the next attempt.
     *
     * @return the delay, never negative
     */
    public Duration delay() {
        return delay;
    }
}
