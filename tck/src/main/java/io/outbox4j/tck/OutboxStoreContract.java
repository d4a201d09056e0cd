package io.outbox4j.tck;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * The store contract kit: one JUnit 5 test per rule of the {@link OutboxStore} contract ({@code
 * docs/architecture.md} §4.3 and §7.1, {@code docs/per-key-order.md}).
 *
 * <p>A store implementer extends this class in their test sources and supplies the factories: the
 * store under test ({@link #store()}, optionally a {@link #secondStore()} over the same storage), a
 * way to enqueue messages in a committed and in a rolled-back transaction (with {@link
 * io.outbox4j.api.Outbox#enqueueAll} and with {@link io.outbox4j.api.Outbox#enqueue}), and a way to
 * empty the storage. Every rule is a package-private test method named {@code required_<rule>} or
 * {@code optional_<rule>}, grouped by concern in {@link Nested} classes, so a subclass can neither
 * override nor hide one. A required rule is never skipped; when it fails it names what the store
 * did wrong. An optional rule runs unless a capability knob or an optional factory says the store
 * (or its test server) cannot run it; it is then skipped with a message that names that knob:
 *
 * <ul>
 *   <li>{@link #transactionsUnsupported()}: the rules that need a rolled-back transaction or a
 *       rejected batch inside one transaction;
 *   <li>{@link #largePayloadUnsupported()}: the 1 MiB payload rule;
 *   <li>{@link #admin()}: the rules that replay or discard a dead letter to unblock its key;
 *   <li>{@link #storeWhereDeadLettersDoNotBlock()}: the rule for the store option under which dead
 *       letters do not block their key;
 *   <li>{@link #enqueueCommittingDespiteFailure(List)}: the rule for a caller who catches the
 *       rejection of a batch and commits anyway.
 * </ul>
 *
 * <p>{@link #store()} must be built with the store's defaults: in particular dead letters block
 * their key there.
 *
 * <p>Time: every lease decision is driven by the {@link ClaimRequest#now()} the kit passes, so no
 * rule ever sleeps. The kit's clock starts at the wall clock (plus {@link #clockSkewTolerance()})
 * after each enqueue and only moves forward. A store may stamp enqueue time with its own clock (the
 * application's or the database's), but must decide leases, releases and {@code notBefore} by the
 * request's {@code now}.
 *
 * <p>Test data: ids, {@code occurredAt} and enqueue order never agree (ids are not ascending and
 * {@code occurredAt} zigzags), so a store that orders by id or by occurrence instead of by enqueue
 * order fails.
 *
 * <p>Lifecycle: before each rule the kit calls {@link #resetStore()}; the subclass's own
 * {@code @BeforeEach} and {@code @BeforeAll} methods run first, so fields they set are ready. The
 * kit's own state is per test instance, as JUnit creates one per rule.
 */
public abstract class OutboxStoreContract {
    /** The kit's clock and test data, which every rule group of this instance shares. */
    final KitClock clock = new KitClock(this::clockSkewTolerance);

    /** Creates the kit; subclasses supply the factories. */
    protected OutboxStoreContract() {}

    /**
     * Returns the store under test, built with the store's defaults. Called after {@link
     * #resetStore()} before each test; may return the same instance every time.
     *
     * @return the store under test
     */
    protected abstract OutboxStore store();

    /**
     * Returns another store instance over the same storage (another connection pool, another
     * client), for the rules about several relays. The default returns {@link #store()}.
     *
     * @return a second store instance sharing the storage of {@link #store()}
     */
    protected OutboxStore secondStore() {
        return store();
    }

    /**
     * Removes every message (pending, leased and dead) from the storage. Called before each test.
     */
    protected abstract void resetStore();

    /**
     * Enqueues the messages through the store's write side ({@link
     * io.outbox4j.api.Outbox#enqueueAll}) in one transaction that commits. If {@code enqueueAll}
     * throws, let the exception through and roll the transaction back.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    /**
     * Enqueues one message through the single form of the store's write side ({@link
     * io.outbox4j.api.Outbox#enqueue}, not {@code enqueueAll}) in a transaction that commits. If
     * {@code enqueue} throws, let the exception through and roll the transaction back.
     *
     * @param message the message
     */
    protected abstract void enqueueOneCommitted(Message message);

    /**
     * Enqueues the messages through the store's write side in one transaction that is rolled back.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueRolledBack(List<Message> messages);

    /**
     * Optional factory: enqueues the messages with {@code enqueueAll} in one transaction and, when
     * that throws, catches the exception, <b>commits the transaction anyway</b> (as a caller who
     * handles a duplicate id and carries on would) and then rethrows the caught exception. Used by
     * {@code optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind}, which is skipped,
     * naming this method, while it is not overridden. (If your database cannot commit after a
     * rejected write, add the commit's failure to the rethrown exception as suppressed.)
     *
     * @param messages the messages, in order
     */
    protected void enqueueCommittingDespiteFailure(List<Message> messages) {
        throw NotSupplied.COMMITTING_DESPITE_FAILURE.get();
    }

    /**
     * The operator's port of the store under test, over the same storage; rules that replay or
     * discard a dead letter need it and are skipped, naming this method, when it is empty. The
     * default returns {@link #store()} when it implements {@link OutboxAdmin}.
     *
     * @return the admin port, or empty
     */
    protected Optional<OutboxAdmin> admin() {
        return store() instanceof OutboxAdmin a ? Optional.of(a) : Optional.empty();
    }

    /**
     * Another store instance over the same storage, built with the store's option under which dead
     * letters do not block the later messages of their key. Empty (the default) skips {@code
     * optional_deadLettersDoNotBlockWhenTheStoreIsBuiltSo}, naming this method.
     *
     * @return the store built with that option, or empty when the store has no such option
     */
    protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
        return Optional.empty();
    }

    /**
     * Reads the dead-letter reason the store kept for a message. The default reads it through
     * {@link #admin()} ({@link OutboxAdmin#deadLetters}); override it only for a store without an
     * admin port.
     *
     * @param messageId the message id
     * @return the reason if the message is dead-lettered, else empty
     */
    protected Optional<String> deadLetterReason(String messageId) {
        OutboxAdmin admin =
                admin().orElseThrow(
                                () ->
                                        new IllegalStateException(
                                                "the kit reads dead-letter reasons through admin(),"
                                                        + " which is empty: let admin() return the"
                                                        + " store's OutboxAdmin or override"
                                                        + " deadLetterReason(String)"));
        DeadLetterQuery query = DeadLetterQuery.all().limit(DeadLetterQuery.MAX_LIMIT);
        while (true) {
            DeadLetterPage page = admin.deadLetters(query);
            for (DeadMessage m : page.items()) {
                if (m.message().id().equals(messageId)) {
                    return Optional.of(m.reason());
                }
            }
            if (page.next().isEmpty() || page.items().isEmpty()) {
                return Optional.empty();
            }
            query = query.after(page.next().get());
        }
    }

    /**
     * Capability knob: return a reason when the store (or the server it runs against) cannot run
     * enqueue-in-transaction rules; they are then skipped with that reason, never passed.
     *
     * @return empty when transactions are supported, else why not
     */
    protected Optional<String> transactionsUnsupported() {
        return Optional.empty();
    }

    /**
     * Capability knob: return a reason when the store cannot keep a payload of {@link
     * MessageLimits#DEFAULT_MAX_PAYLOAD_BYTES} bytes (for example a key-value store whose items are
     * smaller); the rule {@code optional_payloadOfTheDefaultLimitRoundTrips} is then skipped with
     * it.
     *
     * @return empty when a 1 MiB payload is supported, else why not
     */
    protected Optional<String> largePayloadUnsupported() {
        return Optional.empty();
    }

    /**
     * How far the store's enqueue clock (a database server's clock, for example) may differ from
     * this JVM's clock. The kit claims no earlier than the wall clock plus this tolerance after
     * each enqueue, so a message enqueued just now is available to it, and accepts enqueue times
     * that far before the test started. The default is one second.
     *
     * @return a zero or positive tolerance
     */
    protected Duration clockSkewTolerance() {
        return Duration.ofSeconds(1);
    }

    /**
     * How many messages the concurrency rules race over. The default is 2000; lower it only for a
     * store whose test server is slow, and keep it well above the claim batch size times the
     * claimers.
     *
     * @return the message count, at least 200
     */
    protected int concurrencyMessageCount() {
        return 2000;
    }

    /** Thrown by an optional factory that a subclass did not override. */
    static final class NotSupplied extends UnsupportedOperationException {
        private static final long serialVersionUID = 1L;

        static final Supplier<NotSupplied> COMMITTING_DESPITE_FAILURE =
                () ->
                        new NotSupplied(
                                "enqueueCommittingDespiteFailure(List) is not overridden, so the kit"
                                        + " cannot commit a transaction in which a batch was"
                                        + " rejected");

        NotSupplied(String message) {
            super(message);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // The rule groups: each a package-private class Store…Rules over this instance's clock
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Enqueue")
    class Enqueue extends StoreEnqueueRules {
        Enqueue() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Claim")
    class Claim extends StoreClaimRules {
        Claim() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Lease expiry")
    class LeaseExpiry extends StoreLeaseExpiryRules {
        LeaseExpiry() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Complete")
    class Complete extends StoreCompleteRules {
        Complete() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Release")
    class ReleaseRules extends StoreReleaseRules {
        ReleaseRules() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Dead letter")
    class DeadLetterRules extends StoreDeadLetterRules {
        DeadLetterRules() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Per-key order")
    class PerKeyOrder extends StorePerKeyOrderRules {
        PerKeyOrder() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Abandon and attempts")
    class AbandonRules extends StoreAbandonRules {
        AbandonRules() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Extend")
    class ExtendRules extends StoreExtendRules {
        ExtendRules() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Round trip")
    class RoundTrip extends StoreRoundTripRules {
        RoundTrip() {
            super(OutboxStoreContract.this);
        }
    }

    @Nested
    @DisplayName("Concurrency")
    class Concurrency extends StoreConcurrencyRules {
        Concurrency() {
            super(OutboxStoreContract.this);
        }
    }

    /** A human-readable summary of the kit's clock, for debugging a failing subclass. */
    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + clock + "]";
    }
}
