package io.outbox4j.tck.example;

// tag::admin-example[]
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.InMemoryOutboxStore;
import io.outbox4j.tck.OutboxAdminContract;
import java.util.List;

/** Runs every rule of the admin contract against the reference store; put yours in its place. */
class MyAdminContractTest extends OutboxAdminContract {
    private static final InMemoryOutboxStore STORE = new InMemoryOutboxStore();

    @Override
    protected OutboxStore store() {
        return STORE; // built with your store's defaults
    }

    @Override
    protected OutboxAdmin admin() {
        return STORE; // the default already returns store() when it is an OutboxAdmin
    }

    @Override
    protected void resetStore() {
        STORE.clear();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        STORE.enqueueCommitted(messages); // one transaction that commits
    }
}
// end::admin-example[]
