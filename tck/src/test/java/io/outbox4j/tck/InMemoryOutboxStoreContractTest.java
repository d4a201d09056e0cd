package io.outbox4j.tck;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import java.util.List;
import java.util.Optional;

/** The kit against the reference store: every required rule must pass, nothing may be skipped. */
class InMemoryOutboxStoreContractTest extends OutboxStoreContract {
    private final InMemoryOutboxStore store = new InMemoryOutboxStore();

    @Override
    protected OutboxStore store() {
        return store;
    }

    @Override
    protected void resetStore() {
        store.clear();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        store.enqueueCommitted(messages);
    }

    @Override
    protected void enqueueRolledBack(List<Message> messages) {
        InMemoryOutboxStore.Transaction tx = store.begin();
        store.enqueueAll(tx, messages);
        tx.rollback();
    }

    @Override
    protected Optional<String> deadLetterReason(String messageId) {
        return store.deadLetterReason(messageId);
    }
}
