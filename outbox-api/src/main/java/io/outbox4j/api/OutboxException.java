package io.outbox4j.api;

import org.jspecify.annotations.Nullable;

/**
 * The one unchecked root of every exception outbox4j throws on purpose. Catch it to handle any
 * outbox failure; catch a subtype where a specific reaction makes sense:
 *
 * <ul>
 *   <li>{@link StoreUnavailableException}: the store could not do what was asked (connection lost,
 *       timeout, a database error, a missing table); retry later.
 *   <li>{@link DuplicateMessageException}: enqueue of an id already in the outbox.
 *   <li>{@link StaleLeaseException}: a lease is no longer the caller's (it ran out, and the message
 *       may have been claimed by someone else).
 *   <li>{@link RetryableFailureException} (and its {@link RetryAfterException}): a publish that a
 *       later attempt may get through.
 *   <li>{@link PermanentFailureException} (and its {@link InvalidMessageException}): a publish no
 *       retry can fix; the message goes to the dead letter.
 * </ul>
 *
 * Bad arguments (a message field out of its rules, a setting out of range) are {@link
 * IllegalArgumentException}s, as everywhere in Java.
 *
 * <p>The class stays concrete so that code written against earlier versions keeps compiling, but
 * outbox4j itself throws only the subtypes, and a custom store or publisher should too.
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
    public OutboxException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
