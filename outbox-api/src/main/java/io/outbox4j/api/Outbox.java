package io.outbox4j.api;

import java.util.List;

/**
 * The write side of an outbox: inserts events through the caller's own transaction, so the business
 * change and its events commit or roll back together.
 *
 * <p>The handle must be inside a transaction the caller commits: a store refuses a JDBC connection
 * or Jdbi handle in auto-commit mode with an {@link IllegalArgumentException} and writes nothing
 * (the event would commit on its own, apart from the business change; store-jdbi's {@code
 * allowEnqueueOutsideTransaction(true)} lifts this for code that knowingly enqueues alone). An
 * enqueue that fails leaves the caller's transaction usable and nothing of the call in the outbox.
 * A committed message is claimable by relays in any process; one that is rolled back never was.
 *
 * @param <T> the store's transaction handle type (a Jdbi {@code Handle}, a JDBC {@code Connection},
 *     a MongoDB {@code ClientSession}…); the caller owns it and decides when to commit
 */
public interface Outbox<T> {
    /**
     * Inserts one message in the caller's transaction.
     *
     * @param transaction the caller's open transaction handle
     * @param message the message to insert
     * @throws DuplicateMessageException if a message with the same id is already in the outbox
     */
    void enqueue(T transaction, Message message);

    /**
     * Inserts several messages in the caller's transaction, in one round trip where the store can.
     * Either all are inserted or the call fails.
     *
     * @param transaction the caller's open transaction handle
     * @param messages the messages to insert, in order
     * @throws DuplicateMessageException if one id is already in the outbox or appears twice in the
     *     list
     */
    void enqueueAll(T transaction, List<Message> messages);
}
