package io.outbox4j.tck;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The reference store: an in-memory implementation that honours the {@link OutboxStore} contract
 * exactly. It is thread-safe (one lock), decides every lease by the {@link ClaimRequest#now()} it
 * is given, and makes every write a compare-and-set on owner and receipt. It exists to test the
 * engine and to calibrate the contract kit; it is not a product feature (nothing survives the JVM).
 *
 * <p>Its transaction handle is {@link Transaction}: messages enqueued through one become visible,
 * all at once, on {@link Transaction#commit()}, and never after {@link Transaction#rollback()}.
 */
public class InMemoryOutboxStore implements OutboxStore, Outbox<InMemoryOutboxStore.Transaction> {
    private final Object lock = new Object();
    private final Clock clock;
    private final Map<String, Row> rows = new HashMap<>();
    private final Map<String, Row> byReceipt = new HashMap<>();
    private long sequence;

    /**
     * Creates an empty store whose enqueued messages become available at the system clock's time.
     */
    public InMemoryOutboxStore() {
        this(Clock.systemUTC());
    }

    /**
     * Creates an empty store.
     *
     * @param clock the clock that stamps enqueue time (a message without {@code notBefore} is
     *     available from then)
     */
    public InMemoryOutboxStore(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
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
        enqueueAll(transaction, List.of(message));
    }

    @Override
    public void enqueueAll(Transaction transaction, List<Message> messages) {
        Objects.requireNonNull(transaction, "transaction");
        Objects.requireNonNull(messages, "messages");
        synchronized (lock) {
            transaction.checkOpen();
            for (Message m : messages) {
                Objects.requireNonNull(m, "message");
                if (rows.containsKey(m.id()) || transaction.ids.contains(m.id())) {
                    throw new DuplicateMessageException(m.id(), null);
                }
                transaction.ids.add(m.id());
                transaction.pending.add(m);
            }
        }
    }

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        synchronized (lock) {
            Instant now = request.now();
            List<Row> available = new ArrayList<>();
            for (Row r : rows.values()) {
                if (r.deadReason == null && !r.availableAt.isAfter(now)) {
                    available.add(r);
                }
            }
            available.sort(
                    Comparator.comparing((Row r) -> r.availableAt).thenComparingLong(r -> r.seq));
            List<Delivery> out = new ArrayList<>();
            for (Row r : available.subList(0, Math.min(request.limit(), available.size()))) {
                r.owner = request.owner();
                if (r.receipt != null) {
                    byReceipt.remove(r.receipt);
                }
                r.receipt = UUID.randomUUID().toString();
                byReceipt.put(r.receipt, r);
                r.attempts++;
                r.availableAt = request.leaseUntil();
                out.add(new Delivery(r.message, r.receipt, r.attempts));
            }
            return out;
        }
    }

    @Override
    public Set<String> complete(Completion completion) {
        synchronized (lock) {
            Set<String> stale = new LinkedHashSet<>();
            for (String receipt : completion.receipts()) {
                Row r = leased(completion.owner(), receipt);
                if (r == null) {
                    stale.add(receipt);
                } else {
                    rows.remove(r.message.id());
                    byReceipt.remove(receipt);
                }
            }
            return stale;
        }
    }

    @Override
    public boolean release(Release release) {
        synchronized (lock) {
            Row r = leased(release.owner(), release.receipt());
            if (r == null) {
                return false;
            }
            clearLease(r);
            r.availableAt = release.availableAt();
            r.lastError = release.error();
            return true;
        }
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        synchronized (lock) {
            Row r = leased(deadLetter.owner(), deadLetter.receipt());
            if (r == null) {
                return false;
            }
            clearLease(r);
            r.deadReason = deadLetter.reason();
            return true;
        }
    }

    /**
     * Returns the reason a message was dead-lettered with.
     *
     * @param messageId the message id
     * @return the reason, or empty if the message is not dead-lettered
     */
    public Optional<String> deadLetterReason(String messageId) {
        synchronized (lock) {
            Row r = rows.get(messageId);
            return r == null ? Optional.empty() : Optional.ofNullable(r.deadReason);
        }
    }

    /**
     * Returns the attempts counted for a message still in the store.
     *
     * @param messageId the message id
     * @return the attempt count, or empty if the message is gone
     */
    public Optional<Integer> attempts(String messageId) {
        synchronized (lock) {
            Row r = rows.get(messageId);
            return r == null ? Optional.empty() : Optional.of(r.attempts);
        }
    }

    /**
     * Returns the last error a release recorded for a message.
     *
     * @param messageId the message id
     * @return the error text, or empty
     */
    public Optional<String> lastError(String messageId) {
        synchronized (lock) {
            Row r = rows.get(messageId);
            return r == null ? Optional.empty() : Optional.ofNullable(r.lastError);
        }
    }

    /**
     * Counts the messages still in the store, dead-lettered ones included.
     *
     * @return the number of stored messages
     */
    public int size() {
        synchronized (lock) {
            return rows.size();
        }
    }

    /** Removes every message. */
    public void clear() {
        synchronized (lock) {
            rows.clear();
            byReceipt.clear();
        }
    }

    /**
     * Returns the row leased by this owner under this receipt, or null when the receipt is stale.
     */
    private Row leased(String owner, String receipt) {
        Row r = byReceipt.get(receipt);
        return r != null && owner.equals(r.owner) && r.deadReason == null ? r : null;
    }

    private void clearLease(Row r) {
        byReceipt.remove(r.receipt);
        r.owner = null;
        r.receipt = null;
    }

    private static final class Row {
        final Message message;
        final long seq;
        Instant availableAt;
        int attempts;
        String owner;
        String receipt;
        String lastError;
        String deadReason;

        Row(Message message, long seq, Instant availableAt) {
            this.message = message;
            this.seq = seq;
            this.availableAt = availableAt;
        }
    }

    /** A transaction handle of the in-memory store: buffers enqueued messages until commit. */
    public final class Transaction {
        private final List<Message> pending = new ArrayList<>();
        private final Set<String> ids = new HashSet<>();
        private boolean open = true;

        private Transaction() {}

        /** Makes every message enqueued in this transaction visible at once. */
        public void commit() {
            synchronized (lock) {
                checkOpen();
                open = false;
                Instant now = clock.instant();
                for (Message m : pending) {
                    if (rows.containsKey(m.id())) {
                        throw new DuplicateMessageException(m.id(), null);
                    }
                }
                for (Message m : pending) {
                    rows.put(m.id(), new Row(m, ++sequence, m.notBefore().orElse(now)));
                }
            }
        }

        /** Discards every message enqueued in this transaction. */
        public void rollback() {
            synchronized (lock) {
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
}
