package io.outbox4j.tck;

import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.util.List;
import java.util.Optional;

/**
 * The admin kit over the reference store, its admin port wrapped by one deliberate defect (and its
 * dispatch side in a {@link ForwardingStore}, so a defect can see the leases). Subclasses are
 * static nested classes of {@link BrokenAdminsTest}, run only through {@link KitReport}.
 */
abstract class BrokenAdminContract extends OutboxAdminContract {
    final InMemoryOutboxStore reference = new InMemoryOutboxStore();
    private ForwardingStore store;
    private OutboxAdmin admin;

    /** Wraps the reference store's dispatch side; the default forwards everything. */
    ForwardingStore wrapStore(InMemoryOutboxStore reference) {
        return new ForwardingStore(reference);
    }

    /** Wraps the reference store's admin side in the defect; the default breaks nothing. */
    OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
        return new ForwardingAdmin(reference);
    }

    /** The dead letter with this id, as the reference store lists it. */
    Optional<DeadMessage> dead(String id) {
        return reference
                .deadLetters(DeadLetterQuery.all().limit(DeadLetterQuery.MAX_LIMIT))
                .items()
                .stream()
                .filter(d -> d.message().id().equals(id))
                .findFirst();
    }

    @Override
    protected OutboxStore store() {
        if (store == null) {
            store = wrapStore(reference);
        }
        return store;
    }

    @Override
    protected OutboxAdmin admin() {
        if (admin == null) {
            admin = breakIt(reference, (ForwardingStore) store());
        }
        return admin;
    }

    @Override
    protected void resetStore() {
        reference.clear();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        reference.enqueueCommitted(messages);
    }
}
