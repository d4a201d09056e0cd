package io.outbox4j.tck;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The kit over the reference store wrapped by one deliberate defect. Subclasses are run only
 * through {@link KitReport} (junit-platform-testkit), never by surefire: they are static nested
 * classes of {@link BrokenStoresTest}, which surefire's default {@code **}{@code /*$*} exclusion
 * skips.
 */
abstract class BrokenStoreContract extends OutboxStoreContract {
    final InMemoryOutboxStore reference = newReference();
    private OutboxStore broken;

    /** The reference store the defect wraps (created once per rule). */
    InMemoryOutboxStore newReference() {
        return new InMemoryOutboxStore();
    }

    /** Wraps the reference store in the defect; the default breaks nothing in the store itself. */
    OutboxStore breakIt(InMemoryOutboxStore store) {
        return store;
    }

    /** A store whose claims pass every delivery through {@code change}. */
    static OutboxStore changingDeliveries(OutboxStore store, UnaryOperator<Delivery> change) {
        return ForwardingStore.changingClaims(store, (r, d) -> change.apply(d));
    }

    /** A store whose claims return each message passed through {@code change}. */
    static OutboxStore changingMessages(OutboxStore store, UnaryOperator<Message> change) {
        return changingDeliveries(
                store,
                d ->
                        new Delivery(
                                change.apply(d.message()),
                                d.receipt(),
                                d.attempt(),
                                d.enqueuedAt()));
    }

    @Override
    protected OutboxStore store() {
        if (broken == null) {
            broken = breakIt(reference);
        }
        return broken;
    }

    /** The defects show with a few hundred messages; the reference run keeps the default 2000. */
    @Override
    protected int concurrencyMessageCount() {
        return 300;
    }

    @Override
    protected void resetStore() {
        reference.clear();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        reference.enqueueCommitted(messages);
    }

    @Override
    protected void enqueueOneCommitted(Message message) {
        InMemoryOutboxStore.Transaction tx = reference.begin();
        reference.enqueue(tx, message);
        tx.commit();
    }

    @Override
    protected void enqueueCommittingDespiteFailure(List<Message> messages) {
        InMemoryOutboxStore.Transaction tx = reference.begin();
        try {
            reference.enqueueAll(tx, messages);
        } finally {
            tx.commit();
        }
    }

    /** The reference store's admin port, over the same messages as the broken store. */
    @Override
    protected Optional<OutboxAdmin> admin() {
        return Optional.of(reference);
    }

    @Override
    protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
        return Optional.of(reference.withDeadLettersBlockingTheirKey(false));
    }

    @Override
    protected void enqueueRolledBack(List<Message> messages) {
        InMemoryOutboxStore.Transaction tx = reference.begin();
        reference.enqueueAll(tx, messages);
        tx.rollback();
    }
}
