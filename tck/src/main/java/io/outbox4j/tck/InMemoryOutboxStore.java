package io.outbox4j.tck;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.Buckets;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.api.Release;
import io.outbox4j.tck.InMemoryStorage.Row;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The reference store: an in-memory implementation that honours the {@link OutboxStore} and {@link
 * OutboxAdmin} contracts exactly. It is thread-safe (one lock per storage), decides every lease by
 * the {@link ClaimRequest#now()} it is given, keeps per-key order (a keyed message is claimable
 * only when every earlier message of its key still in the store is claimed in the same claim,
 * before it), and makes every write a compare-and-set on owner and receipt. It exists to test the
 * engine and to calibrate the contract kits; it is not a product feature (nothing survives the
 * JVM).
 *
 * <p>Its transaction handle is {@link Transaction}: messages enqueued through one become visible,
 * all at once and in order, on {@link Transaction#commit()}, and never after {@link
 * Transaction#rollback()}. A batch rejected for a duplicate id adds nothing to the transaction, so
 * a caller who catches the exception and commits publishes none of that batch.
 *
 * <p>Membership ({@link OutboxMembership}) is judged by the store's clock, the one given to the
 * builder, as a database judges it by its own: a claim {@link ClaimRequest#member() as a member}
 * takes keyed messages only of the buckets its owner holds while its membership lasts by that
 * clock, and its leases are timed by that clock too, whatever its {@code now} says.
 *
 * <p>Wake-ups ({@link OutboxWakeUps}) are in-process: a commit that added messages wakes every
 * listener of every store instance built over the same messages, on the committing thread, after
 * the messages became claimable.
 *
 * <p>Dead letters block the later messages of their key until they are replayed or discarded; a
 * store built with {@link Builder#deadLettersBlockTheirKey(boolean)
 * deadLettersBlockTheirKey(false)} lets them stop counting instead.
 */
public class InMemoryOutboxStore extends InMemoryAdmin
        implements OutboxStore,
                OutboxAdmin,
                OutboxMembership,
                OutboxWakeUps,
                Outbox<InMemoryOutboxStore.Transaction> {
    /** Claim order: availability, then enqueue order. */
    private static final Comparator<Row> CLAIM_ORDER =
            Comparator.comparing((Row r) -> r.availableAt).thenComparingLong(r -> r.seq);

    private final Clock clock;
    private final boolean storeTimesMembers;

    /**
     * Creates an empty store whose enqueued messages are stamped by the system clock, and whose
     * dead letters block their key.
     */
    public InMemoryOutboxStore() {
        this(Clock.systemUTC());
    }

    /**
     * Creates an empty store whose dead letters block their key.
     *
     * @param clock the clock that stamps enqueue time (a message without {@code notBefore} is
     *     available from then)
     */
    public InMemoryOutboxStore(Clock clock) {
        this(new InMemoryStorage(), clock, true);
    }

    private InMemoryOutboxStore(
            InMemoryStorage storage, Clock clock, boolean deadLettersBlockTheirKey) {
        this(storage, clock, deadLettersBlockTheirKey, true);
    }

    private InMemoryOutboxStore(
            InMemoryStorage storage,
            Clock clock,
            boolean deadLettersBlockTheirKey,
            boolean storeTimesMembers) {
        super(storage, deadLettersBlockTheirKey);
        this.clock = Objects.requireNonNull(clock, "clock");
        this.storeTimesMembers = storeTimesMembers;
    }

    /**
     * The same store with one defect, for the kit's self-test: member claims are timed by the
     * claimer's {@code now}, not by this store's clock.
     */
    InMemoryOutboxStore trustingMembersClocks() {
        return new InMemoryOutboxStore(storage, clock, deadLettersBlockTheirKey, false);
    }

    /**
     * Starts a store with the system clock and dead letters that block their key.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns a second store over the same messages (one storage, one lock), like a second store
     * instance built over the same table, that differs from this one only in whether dead letters
     * block their key.
     *
     * @param block {@code true} for the default behaviour, {@code false} to let dead letters stop
     *     counting as earlier messages of their key
     * @return a store sharing this one's storage and clock
     */
    public InMemoryOutboxStore withDeadLettersBlockingTheirKey(boolean block) {
        return new InMemoryOutboxStore(storage, clock, block);
    }

    /**
     * Whether a dead letter holds back the later messages of its key.
     *
     * @return {@code true} unless built otherwise
     */
    public boolean deadLettersBlockTheirKey() {
        return deadLettersBlockTheirKey;
    }

    /**
     * Opens a transaction for {@link #enqueue}.
     *
     * @return a new open transaction
     */
    public Transaction begin() {
        return new Transaction();
    }

    /**
     * Enqueues messages in a transaction of their own that commits at once.
     *
     * @param messages the messages
     */
    public void enqueueCommitted(List<Message> messages) {
        Transaction tx = begin();
        enqueueAll(tx, messages);
        tx.commit();
    }

    @Override
    public void enqueue(Transaction transaction, Message message) {
        enqueueAll(transaction, List.of(Objects.requireNonNull(message, "message")));
    }

    @Override
    public void enqueueAll(Transaction transaction, List<Message> messages) {
        Objects.requireNonNull(transaction, "transaction");
        Objects.requireNonNull(messages, "messages");
        synchronized (storage) {
            transaction.checkOpen();
            // all or nothing: every check runs before the first message joins the transaction
            Set<String> inThisBatch = new HashSet<>();
            for (Message m : messages) {
                Objects.requireNonNull(m, "message");
                if (!inThisBatch.add(m.id())) {
                    throw DuplicateMessageException.twiceInOneBatch(m.id());
                }
                if (storage.rows.containsKey(m.id()) || transaction.ids.contains(m.id())) {
                    throw new DuplicateMessageException(m.id(), null);
                }
            }
            transaction.ids.addAll(inThisBatch);
            transaction.pending.addAll(messages);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // OutboxStore
    // ------------------------------------------------------------------------------------------------

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        synchronized (storage) {
            // a member's claim is timed by this store's clock (as a database times it by its own)
            Instant now = request.member() && storeTimesMembers ? clock.instant() : request.now();
            Instant until = now.plus(request.lease());
            Predicate<Row> owned = ownedBy(request);
            List<Row> due = new ArrayList<>();
            for (Row r : storage.rows.values()) {
                if (r.deadAt == null && !r.availableAt.isAfter(now) && owned.test(r)) {
                    due.add(r);
                }
            }
            due.sort(CLAIM_ORDER);
            Set<Row> taken = new HashSet<>();
            List<Delivery> out = new ArrayList<>();
            for (Row r : due) {
                if (out.size() == request.limit()) {
                    break;
                }
                Row earlier = earlierOfItsKey(r);
                if (earlier != null && !taken.contains(earlier)) {
                    continue; // held back behind an earlier message of its key
                }
                taken.add(r);
                if (r.receipt != null) {
                    storage.byReceipt.remove(r.receipt);
                }
                r.owner = request.owner();
                r.receipt = UUID.randomUUID().toString();
                storage.byReceipt.put(r.receipt, r);
                r.attempts++;
                r.availableAt = until;
                out.add(new Delivery(r.message, r.receipt, r.attempts, r.enqueuedAt));
            }
            return out;
        }
    }

    /**
     * Which rows a claim may take by ownership: all for a claim not made as a member; otherwise
     * unkeyed rows, and keyed rows of buckets the owner holds while its membership lasts by the
     * store's clock.
     */
    private Predicate<Row> ownedBy(ClaimRequest request) {
        if (!request.member()) {
            return r -> true;
        }
        Instant until = storage.members.get(request.owner());
        boolean live = until != null && until.isAfter(clock.instant());
        String owner = request.owner();
        return r -> r.key == null || (live && owner.equals(storage.owners[r.bucket]));
    }

    // ------------------------------------------------------------------------------------------------
    // OutboxMembership
    // ------------------------------------------------------------------------------------------------

    /**
     * Listens in-process: {@code wakeUp} runs on the committing thread after each commit that added
     * messages, until the returned listening is closed.
     */
    @Override
    public Listening listen(Runnable wakeUp) {
        if (wakeUp == null) {
            throw new IllegalArgumentException("wakeUp must not be null");
        }
        Runnable listener =
                () -> wakeUp.run(); // a distinct instance, so that only this one is removed
        storage.listeners.add(listener);
        return () -> storage.listeners.remove(listener);
    }

    @Override
    public Membership renew(String member, Duration lease) {
        OutboxMembership.check(member, lease);
        synchronized (storage) {
            Instant now = clock.instant();
            storage.members.values().removeIf(until -> !until.isAfter(now));
            Instant until = now.plus(lease);
            storage.members.put(member, until);
            int moved = storage.rebalance();
            List<Integer> mine = new ArrayList<>();
            for (int b = 0; b < Buckets.COUNT; b++) {
                if (member.equals(storage.owners[b])) {
                    mine.add(b);
                }
            }
            return new Membership(
                    member, mine, new ArrayList<>(storage.members.keySet()), until, now, moved);
        }
    }

    @Override
    public void leave(String member) {
        Objects.requireNonNull(member, "member");
        synchronized (storage) {
            if (storage.members.remove(member) != null) {
                Instant now = clock.instant();
                storage.members.values().removeIf(until -> !until.isAfter(now));
                storage.rebalance();
            }
        }
    }

    @Override
    public List<Member> members() {
        synchronized (storage) {
            Instant now = clock.instant();
            List<Member> out = new ArrayList<>();
            storage.members.forEach(
                    (id, until) -> {
                        int owned = 0;
                        for (String o : storage.owners) {
                            owned += id.equals(o) ? 1 : 0;
                        }
                        out.add(new Member(id, until, until.isAfter(now), owned));
                    });
            return out;
        }
    }

    /**
     * The latest message of {@code r}'s key enqueued before it that still counts (dead letters
     * count unless this store lets them not block), or null.
     */
    private @Nullable Row earlierOfItsKey(Row r) {
        if (r.key == null) {
            return null;
        }
        TreeMap<Long, Row> ofKey = Objects.requireNonNull(storage.keys.get(r.key)); // indexed
        for (Row e : ofKey.headMap(r.seq, false).descendingMap().values()) {
            if (e.deadAt == null || deadLettersBlockTheirKey) {
                return e;
            }
        }
        return null;
    }

    @Override
    public Set<String> complete(Completion completion) {
        return onEachLeased(completion.owner(), completion.receipts(), storage::remove);
    }

    @Override
    public boolean release(Release release) {
        synchronized (storage) {
            Row r = storage.leased(release.owner(), release.receipt());
            if (r == null) {
                return false;
            }
            storage.clearLease(r);
            r.availableAt = release.availableAt();
            r.lastError = release.error();
            return true;
        }
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        synchronized (storage) {
            Row r = storage.leased(deadLetter.owner(), deadLetter.receipt());
            if (r == null) {
                return false;
            }
            storage.clearLease(r);
            r.deadAt = deadLetter.at();
            r.deadReason = deadLetter.reason();
            return true;
        }
    }

    @Override
    public Set<String> extend(Extension extension) {
        return onEachLeased(
                extension.owner(), extension.receipts(), r -> r.availableAt = extension.until());
    }

    @Override
    public Set<String> abandon(Abandonment abandonment) {
        return onEachLeased(
                abandonment.owner(),
                abandonment.receipts(),
                r -> {
                    storage.clearLease(r);
                    r.availableAt = r.enqueuedAt;
                    r.attempts = Math.max(0, r.attempts - 1);
                });
    }

    /**
     * Under the storage lock, runs {@code write} on the row of each receipt that is {@code owner}'s
     * live lease, and returns the other receipts (stale), in order.
     */
    private Set<String> onEachLeased(String owner, List<String> receipts, Consumer<Row> write) {
        synchronized (storage) {
            Set<String> stale = new LinkedHashSet<>();
            for (String receipt : receipts) {
                Row r = storage.leased(owner, receipt);
                if (r == null) {
                    stale.add(receipt);
                } else {
                    write.accept(r);
                }
            }
            return stale;
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Inspection for tests
    // ------------------------------------------------------------------------------------------------

    /**
     * Returns the reason a message was dead-lettered with.
     *
     * @param messageId the message id
     * @return the reason, or empty if the message is not dead-lettered
     */
    public Optional<String> deadLetterReason(String messageId) {
        synchronized (storage) {
            Row r = storage.rows.get(messageId);
            return r == null || r.deadAt == null
                    ? Optional.empty()
                    : Optional.of(Objects.requireNonNull(r.deadReason)); // set with deadAt
        }
    }

    /**
     * Returns the attempts counted for a message still in the store.
     *
     * @param messageId the message id
     * @return the attempt count, or empty if the message is gone
     */
    public Optional<Integer> attempts(String messageId) {
        synchronized (storage) {
            Row r = storage.rows.get(messageId);
            return r == null ? Optional.empty() : Optional.of(r.attempts);
        }
    }

    /**
     * Counts the messages still in the store, dead-lettered ones included.
     *
     * @return the number of stored messages
     */
    public int size() {
        synchronized (storage) {
            return storage.rows.size();
        }
    }

    /** Removes every message and every member. */
    public void clear() {
        synchronized (storage) {
            storage.rows.clear();
            storage.byReceipt.clear();
            storage.keys.clear();
            storage.members.clear();
            storage.rebalance();
        }
    }

    /**
     * A transaction handle of the in-memory store: buffers enqueued messages until commit. Not
     * thread-safe; one caller uses one transaction.
     */
    public final class Transaction {
        private final List<Message> pending = new ArrayList<>();
        private final Set<String> ids = new HashSet<>();
        private boolean open = true;

        private Transaction() {}

        /**
         * Makes every message enqueued in this transaction visible at once, stamped with the
         * store's clock (microsecond precision) and in the order they were enqueued.
         *
         * @throws DuplicateMessageException if another transaction committed one of the ids first
         *     (nothing of this transaction is then kept)
         */
        public void commit() {
            synchronized (storage) {
                checkOpen();
                open = false;
                for (Message m : pending) {
                    if (storage.rows.containsKey(m.id())) {
                        throw new DuplicateMessageException(m.id(), null);
                    }
                }
                Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
                for (Message m : pending) {
                    storage.add(new Row(m, ++storage.sequence, now));
                }
            }
            if (!pending.isEmpty()) {
                for (Runnable listener : storage.listeners) {
                    try {
                        listener.run();
                    } catch (RuntimeException e) {
                        // A wake-up is a hint: a listener's failure must not fail the commit.
                    }
                }
            }
        }

        /** Discards every message enqueued in this transaction. */
        public void rollback() {
            synchronized (storage) {
                checkOpen();
                open = false;
                pending.clear();
            }
        }

        private void checkOpen() {
            if (!open) {
                throw new IllegalStateException("transaction is already committed or rolled back");
            }
        }
    }

    /** Builds an {@link InMemoryOutboxStore}. */
    public static final class Builder {
        private Clock clock = Clock.systemUTC();
        private boolean deadLettersBlockTheirKey = true;

        private Builder() {}

        /**
         * Sets the clock that stamps enqueue time.
         *
         * @param clock the clock; the system UTC clock unless set
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Sets whether a dead letter holds back the later messages of its key until it is replayed
         * or discarded.
         *
         * @param block {@code true} (the default) to block, {@code false} to let dead letters stop
         *     counting as earlier messages of their key
         * @return this builder
         */
        public Builder deadLettersBlockTheirKey(boolean block) {
            this.deadLettersBlockTheirKey = block;
            return this;
        }

        /**
         * Builds an empty store.
         *
         * @return the store
         */
        public InMemoryOutboxStore build() {
            return new InMemoryOutboxStore(new InMemoryStorage(), clock, deadLettersBlockTheirKey);
        }
    }
}
