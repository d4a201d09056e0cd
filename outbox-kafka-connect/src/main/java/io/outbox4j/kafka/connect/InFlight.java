package io.outbox4j.kafka.connect;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * The leases of one task between claim and completion. A record handed to Connect is
 * <em>unacknowledged</em> until Kafka acknowledges it ({@link #acknowledged}); its receipt is then
 * <em>pending completion</em> until a completion batch takes it ({@link #takeAcknowledged}); its
 * lease is renewed until it is {@link #completed}. Records are matched by identity: Connect hands
 * back the very record object the task returned.
 *
 * <p>Thread-safe: the task thread adds records, the producer's callback thread acknowledges them,
 * the task's lease keeper completes and renews.
 */
final class InFlight {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition acknowledgement = lock.newCondition();
    private final IdentityHashMap<SourceRecord, String> unacknowledged = new IdentityHashMap<>();
    private final Set<String> renewable = new LinkedHashSet<>();
    private List<String> acknowledged = new ArrayList<>();

    /** Remembers a record about to be returned from {@code poll}. */
    void sent(SourceRecord record, String receipt) {
        locked(
                () -> {
                    unacknowledged.put(record, receipt);
                    renewable.add(receipt);
                });
    }

    /**
     * Moves a record Kafka acknowledged to the completion queue.
     *
     * @return how many receipts wait for completion now, or -1 if the record is unknown
     */
    int acknowledged(SourceRecord record) {
        lock.lock();
        try {
            String receipt = unacknowledged.remove(record);
            if (receipt == null) {
                return -1;
            }
            acknowledged.add(receipt);
            acknowledgement.signalAll();
            return acknowledged.size();
        } finally {
            lock.unlock();
        }
    }

    /** Takes every receipt waiting for completion. */
    List<String> takeAcknowledged() {
        lock.lock();
        try {
            List<String> out = acknowledged;
            acknowledged = new ArrayList<>();
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Forgets receipts that were completed (or found stale): no more renewal. */
    void completed(List<String> receipts) {
        locked(() -> receipts.forEach(renewable::remove));
    }

    /** Puts back receipts whose completion failed, to try again with the next batch. */
    void retryCompletion(List<String> receipts) {
        lock.lock();
        try {
            List<String> merged = new ArrayList<>(receipts.size() + acknowledged.size());
            merged.addAll(receipts);
            merged.addAll(acknowledged);
            acknowledged = merged;
        } finally {
            lock.unlock();
        }
    }

    int pendingCompletion() {
        return read(() -> acknowledged.size()); // the field, read under the lock
    }

    /**
     * The receipts whose leases this task still needs: records Kafka has not acknowledged, and
     * acknowledged ones not completed yet (minus those the store reported lost).
     */
    List<String> renewable() {
        return read(() -> new ArrayList<>(renewable));
    }

    /** Stops renewing leases the store reported stale (expired and claimed by someone else). */
    void lost(Set<String> receipts) {
        locked(() -> renewable.removeAll(receipts));
    }

    int unacknowledged() {
        return read(unacknowledged::size);
    }

    /**
     * Waits until fewer than {@code limit} records are unacknowledged.
     *
     * @return the free capacity, 0 if the wait timed out
     */
    int awaitCapacity(int limit, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        lock.lock();
        try {
            while (unacknowledged.size() >= limit) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return 0;
                }
                acknowledgement.awaitNanos(left);
            }
            return limit - unacknowledged.size();
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code action} holding the lock. */
    private void locked(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    /** Reads {@code value} holding the lock. */
    private <T> T read(Supplier<T> value) {
        lock.lock();
        try {
            return value.get();
        } finally {
            lock.unlock();
        }
    }
}
