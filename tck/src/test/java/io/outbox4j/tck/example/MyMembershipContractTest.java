package io.outbox4j.tck.example;

// tag::membership-example[]
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.InMemoryOutboxStore;
import io.outbox4j.tck.OutboxMembershipContract;
import java.util.List;

/**
 * Runs every rule of the membership contract against the reference store; put yours in its place.
 */
class MyMembershipContractTest extends OutboxMembershipContract {
    private static final InMemoryOutboxStore STORE = new InMemoryOutboxStore();

    @Override
    protected OutboxStore store() {
        return STORE; // implements OutboxStore and OutboxMembership
    }

    @Override
    protected void resetStore() {
        STORE.clear(); // messages and members
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        STORE.enqueueCommitted(messages);
    }
}
// end::membership-example[]
