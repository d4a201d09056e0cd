package io.outbox4j.tck;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxWakeUps;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The messages of the reference store, shared by every {@link InMemoryOutboxStore} built over them
 * (one storage is like one table), and the lock every operation on them holds: the rows by id, the
 * leased rows by receipt, each key's rows in enqueue order, the members and the buckets they own,
 * and the wake-up listeners.
 */
final class InMemoryStorage {
    final Map<String, Row> rows = new LinkedHashMap<>();
    final Map<String, Row> byReceipt = new HashMap<>();

    /** key → its messages still in the store, by enqueue order. */
    final Map<String, TreeMap<Long, Row>> keys = new HashMap<>();

    /** member → the end of its membership, by member id. */
    final TreeMap<String, Instant> members = new TreeMap<>();

    /** bucket → its owner, or null while nobody is a member. */
    final String[] owners = new String[Buckets.COUNT];

    long sequence;

    /** The {@link OutboxWakeUps} listeners, woken after each commit that added messages. */
    final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    /**
     * Assigns every bucket over the recorded members (none: no owner).
     *
     * @return how many buckets changed owner
     */
    int rebalance() {
        int moved = 0;
        Map<String, List<Integer>> assigned =
                members.isEmpty() ? Map.of() : Buckets.assign(members.keySet());
        String[] next = new String[Buckets.COUNT];
        assigned.forEach((m, buckets) -> buckets.forEach(b -> next[b] = m));
        for (int b = 0; b < Buckets.COUNT; b++) {
            if (!Objects.equals(owners[b], next[b])) {
                owners[b] = next[b];
                moved++;
            }
        }
        return moved;
    }

    void add(Row r) {
        rows.put(r.message.id(), r);
        if (r.key != null) {
            keys.computeIfAbsent(r.key, k -> new TreeMap<>()).put(r.seq, r);
        }
    }

    void remove(Row r) {
        rows.remove(r.message.id());
        if (r.receipt != null) {
            byReceipt.remove(r.receipt);
        }
        if (r.key != null) {
            TreeMap<Long, Row> ofKey =
                    Objects.requireNonNull(keys.get(r.key)); // indexed on enqueue
            ofKey.remove(r.seq);
            if (ofKey.isEmpty()) {
                keys.remove(r.key);
            }
        }
    }

    /**
     * Returns the row leased by this owner under this receipt, or null when the receipt is stale.
     */
    @Nullable Row leased(String owner, String receipt) {
        Row r = byReceipt.get(receipt);
        return r != null && owner.equals(r.owner) && r.deadAt == null ? r : null;
    }

    void clearLease(Row r) {
        byReceipt.remove(r.receipt);
        r.owner = null;
        r.receipt = null;
    }

    static final class Row {
        final Message message;
        final @Nullable String key;
        final int bucket;
        final long seq;
        final Instant enqueuedAt;
        Instant availableAt;
        int attempts;
        @Nullable String owner;
        @Nullable String receipt;
        @Nullable String lastError;
        @Nullable Instant deadAt;
        @Nullable String deadReason;

        Row(Message message, long seq, Instant enqueuedAt) {
            this.message = message;
            this.key = message.key().orElse(null);
            this.bucket = key == null ? -1 : Buckets.of(key);
            this.seq = seq;
            this.enqueuedAt = enqueuedAt;
            this.availableAt = message.notBefore().orElse(enqueuedAt);
        }
    }
}
