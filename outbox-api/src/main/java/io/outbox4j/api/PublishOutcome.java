package io.outbox4j.api;

import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The result of publishing one message: published (the broker has taken durable responsibility for
 * it) or failed with a cause. A failure is retryable unless its cause chain holds a {@link
 * PermanentFailureException}; a {@link RetryAfterException} in the chain sets the minimum delay
 * before the retry.
 */
public final class PublishOutcome {
    private static final PublishOutcome PUBLISHED = new PublishOutcome(null);

    private final @Nullable Throwable failure;

    private PublishOutcome(@Nullable Throwable failure) {
        this.failure = failure;
    }

    /**
     * The outcome of a message the broker has durably accepted.
     *
     * @return the published outcome
     */
    public static PublishOutcome published() {
        return PUBLISHED;
    }

    /**
     * The outcome of a message that was not published.
     *
     * @param cause why it failed; wrap it in (or make it) a {@link PermanentFailureException} to
     *     stop retries
     * @return a failed outcome
     */
    public static PublishOutcome failed(Throwable cause) {
        return new PublishOutcome(Checks.notNull(cause, "cause"));
    }

    /**
     * Tells whether the message was published.
     *
     * @return {@code true} if the broker accepted the message
     */
    public boolean isPublished() {
        return failure == null;
    }

    /**
     * Returns the failure, if the message was not published.
     *
     * @return the cause, or empty when published
     */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * Tells whether the failure can never be fixed by a retry.
     *
     * @return {@code true} if the cause chain holds a {@link PermanentFailureException}
     */
    public boolean isPermanent() {
        return find(PermanentFailureException.class).isPresent();
    }

    /**
     * Returns the minimum retry delay the failure asks for, if any.
     *
     * @return the delay of the first {@link RetryAfterException} in the cause chain, or empty
     */
    public Optional<Duration> retryAfter() {
        return find(RetryAfterException.class).map(RetryAfterException::delay);
    }

    private <E extends Throwable> Optional<E> find(Class<E> type) {
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 32; t = t.getCause(), depth++) {
            if (type.isInstance(t)) {
                return Optional.of(type.cast(t));
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        return failure == null
                ? "PublishOutcome[published]"
                : "PublishOutcome[failed: " + failure + "]";
    }
}
