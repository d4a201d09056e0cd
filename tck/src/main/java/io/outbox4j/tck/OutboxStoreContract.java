package io.outbox4j.tck;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import java.util.List;
import java.util.Optional;

/**
 * The store contract kit. A store implementer extends this class in their test sources, supplies the
 * factories below, and gets one test per rule of the {@link OutboxStore} contract.
 *
 * <p>SKELETON: the rules are being written; the factory methods below are the stable surface.
 */
public abstract class OutboxStoreContract {

    /**
     * Returns the store under test. Called after {@link #resetStore()} before each test; may return the
     * same instance every time.
     *
     * @return the store under test
     */
    protected abstract OutboxStore store();

    /**
     * Returns another store instance over the same storage (another connection pool, another client), for
     * the concurrency rules. The default returns {@link #store()}.
     *
     * @return a second store instance sharing the storage of {@link #store()}
     */
    protected OutboxStore secondStore() {
        return store();
    }

    /** Removes every message (pending, leased and dead) from the storage. Called before each test. */
    protected abstract void resetStore();

    /**
     * Enqueues the messages through the store's write side in one transaction that commits.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    /**
     * Enqueues the messages through the store's write side in one transaction that is rolled back.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueRolledBack(List<Message> messages);

    /**
     * Reads the dead-letter reason the store kept for a message.
     *
     * @param messageId the message id
     * @return the reason if the message is dead-lettered, else empty
     */
    protected abstract Optional<String> deadLetterReason(String messageId);

    /**
     * Capability knob: return a reason when the store (or the server it runs against) cannot run
     * enqueue-in-transaction rules; they are then skipped with that reason, never passed.
     *
     * @return empty when transactions are supported, else why not
     */
    protected Optional<String> transactionsUnsupported() {
        return Optional.empty();
    }
}
