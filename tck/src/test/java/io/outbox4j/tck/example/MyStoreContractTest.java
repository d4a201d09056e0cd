package io.outbox4j.tck.example;

// tag::store-example[]
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.InMemoryOutboxStore;
import io.outbox4j.tck.OutboxStoreContract;
import java.util.List;
import java.util.Optional;

/**
 * Runs every rule of the store contract against a store. Here the store is outbox4j's reference
 * in-memory store; put yours in its place (the comments say what a SQL store would do).
 */
class MyStoreContractTest extends OutboxStoreContract {
    // Created once for the whole run (start a server or a pool in a static field or @BeforeAll).
    private static final InMemoryOutboxStore STORE = new InMemoryOutboxStore();

    @Override
    protected OutboxStore store() {
        return STORE; // built with your store's defaults; admin() finds its OutboxAdmin side
    }

    @Override
    protected OutboxStore secondStore() {
        return STORE; // another instance over the same tables (its own pool)
    }

    @Override
    protected void resetStore() {
        STORE.clear(); // DELETE FROM outbox_message
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        InMemoryOutboxStore.Transaction tx = STORE.begin(); // jdbi.useTransaction(h -> …)
        STORE.enqueueAll(tx, messages);
        tx.commit();
    }

    @Override
    protected void enqueueOneCommitted(Message message) {
        InMemoryOutboxStore.Transaction tx = STORE.begin();
        STORE.enqueue(tx, message); // the single form, not enqueueAll
        tx.commit();
    }

    @Override
    protected void enqueueRolledBack(List<Message> messages) {
        InMemoryOutboxStore.Transaction tx = STORE.begin();
        STORE.enqueueAll(tx, messages);
        tx.rollback(); // the kit checks that none of these is ever claimable
    }

    // Optional: leave these out and the rules they enable are skipped, naming the method.

    @Override
    protected void enqueueCommittingDespiteFailure(List<Message> messages) {
        InMemoryOutboxStore.Transaction tx = STORE.begin();
        try {
            STORE.enqueueAll(tx, messages);
        } finally {
            tx.commit(); // even after a DuplicateMessageException, as a careless caller would
        }
    }

    @Override
    protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
        return Optional.of(STORE.withDeadLettersBlockingTheirKey(false)); // same tables
    }
}
// end::store-example[]
