package io.outbox4j.store.mongo;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoCollection;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The claim lock of one outbox: a lock document {@code {_id: "claim", holder, version}} in the
 * collection {@code <outbox collection>.lock}. Claims, and the writes that remove an earlier
 * message from its key's way (complete, discard, dead-letter when dead letters do not block), take
 * it for the few milliseconds of their reads and writes, so the parking and unparking of keyed
 * messages are serialised (see {@link KeyOrder}).
 *
 * <p>Taking the lock is one conditional update ({@code holder: null} → this holder). A holder
 * renews it by bumping {@code version} while it works, and gives it back by clearing {@code
 * holder}. A holder that crashed is recognised without comparing clocks across machines: a waiter
 * that sees the same {@code holder} and {@code version} for a whole {@link #LEASE lease} by its own
 * monotonic clock takes the lock over with a compare-and-set on both. A holder therefore stops
 * writing under the lock once a lease has passed since its last renewal ({@link Held#renew()} tells
 * it). A waiter gives up after {@link #WAIT} with an {@link io.outbox4j.api.OutboxException}.
 *
 * <p>What this cannot exclude: a holder paused (for example by a garbage collector) for longer than
 * a lease between its last check and a write; MongoDB has no fencing across documents without
 * transactions. The lease is many times longer than the lock is ever held.
 */
final class ClaimLock {
    /** How long a holder that neither renews nor releases keeps the lock. */
    static final Duration LEASE = Duration.ofSeconds(3);

    /**
     * How long a claim or a removal waits for the lock before it fails: longer than a lease, so a
     * crashed holder never makes anyone fail.
     */
    static final Duration WAIT = Duration.ofSeconds(10);

    private static final String ID = "claim";
    private static final String HOLDER = "holder";
    private static final String VERSION = "version";
    private static final long MAX_PAUSE_MILLIS = 16;

    private final MongoCollection<BsonDocument> locks;
    private final long leaseNanos;
    private final long waitNanos;

    /** The lease of this lock. */
    Duration lease() {
        return Duration.ofNanos(leaseNanos);
    }

    ClaimLock(MongoCollection<BsonDocument> locks, Duration lease, Duration wait) {
        this.locks = locks;
        this.leaseNanos = lease.toNanos();
        this.waitNanos = wait.toNanos();
    }

    /**
     * Takes the lock, waiting a bounded time.
     *
     * @param what the operation that needs it, for the error message
     * @throws io.outbox4j.api.OutboxException if it cannot be had within the wait, or the thread is
     *     interrupted while waiting
     * @throws MongoException if the server fails
     */
    Held acquire(String what) {
        BsonString token = new BsonString(Receipt.newToken());
        long deadline = System.nanoTime() + waitNanos;
        BsonValue seenHolder = BsonNull.VALUE;
        long seenVersion = Long.MIN_VALUE;
        long seenSince = 0;
        int pauses = 0;
        while (true) {
            long attemptedAt = System.nanoTime();
            if (locks.updateOne(free(), take(token)).getMatchedCount() == 1) {
                return new Held(token, attemptedAt);
            }
            BsonDocument lock = locks.find(new BsonDocument("_id", new BsonString(ID))).first();
            if (lock == null) {
                try {
                    locks.insertOne(
                            new BsonDocument("_id", new BsonString(ID))
                                    .append(HOLDER, token)
                                    .append(VERSION, new BsonInt64(1)));
                    return new Held(token, attemptedAt);
                } catch (MongoWriteException e) {
                    if (e.getError().getCategory() != ErrorCategory.DUPLICATE_KEY) {
                        throw e;
                    }
                    continue; // another claimer created it first
                }
            }
            BsonValue holder = lock.get(HOLDER, BsonNull.VALUE);
            if (holder.isNull()) {
                continue; // released between the two reads
            }
            BsonValue version = lock.get(VERSION, BsonNull.VALUE);
            long v = version.isNumber() ? version.asNumber().longValue() : Long.MIN_VALUE + 1;
            long now = System.nanoTime();
            if (!holder.equals(seenHolder) || v != seenVersion) {
                seenHolder = holder;
                seenVersion = v;
                seenSince = now;
            } else if (now - seenSince >= leaseNanos) {
                // Neither renewed nor released for a whole lease: its holder is gone.
                BsonDocument same =
                        new BsonDocument("_id", new BsonString(ID))
                                .append(HOLDER, holder)
                                .append(VERSION, version);
                if (locks.updateOne(same, take(token)).getMatchedCount() == 1) {
                    return new Held(token, now);
                }
                continue;
            }
            if (now - deadline >= 0) {
                throw Failures.of(
                        "MongoDB outbox "
                                + locks.getNamespace()
                                + ": "
                                + what
                                + " waited "
                                + Duration.ofNanos(waitNanos).toMillis()
                                + " ms for the claim lock, held by another claimer all along;"
                                + " try again");
            }
            pause(pauses++, what);
        }
    }

    private static BsonDocument free() {
        return new BsonDocument("_id", new BsonString(ID)).append(HOLDER, BsonNull.VALUE);
    }

    private static BsonDocument take(BsonString token) {
        return new BsonDocument("$set", new BsonDocument(HOLDER, token))
                .append("$inc", new BsonDocument(VERSION, new BsonInt64(1)));
    }

    private void pause(int pauses, String what) {
        long millis = Math.min(MAX_PAUSE_MILLIS, 1L << Math.min(pauses, 4));
        try {
            TimeUnit.MICROSECONDS.sleep(
                    ThreadLocalRandom.current().nextLong(millis * 500, millis * 1000 + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failures.of(
                    "MongoDB outbox "
                            + locks.getNamespace()
                            + ": "
                            + what
                            + " was interrupted while waiting for the claim lock");
        }
    }

    /** The lock, held. Closing it gives it back. */
    final class Held implements AutoCloseable {
        private final BsonString token;
        private long renewedAt;
        private boolean held = true;

        private Held(BsonString token, long renewedAt) {
            this.token = token;
            this.renewedAt = renewedAt;
        }

        /**
         * Makes sure the lock is still held before a write under it: renews it once a quarter of
         * the lease has passed since the last renewal.
         *
         * @return {@code false} if it was lost (a lease passed without renewal and another claimer
         *     took it over); the caller then writes nothing more under it
         */
        boolean renew() {
            if (!held) {
                return false;
            }
            long now = System.nanoTime();
            if (now - renewedAt < leaseNanos / 4) {
                return true;
            }
            BsonDocument mine = new BsonDocument("_id", new BsonString(ID)).append(HOLDER, token);
            held =
                    locks.updateOne(
                                            mine,
                                            new BsonDocument(
                                                    "$inc",
                                                    new BsonDocument(VERSION, new BsonInt64(1))))
                                    .getMatchedCount()
                            == 1;
            renewedAt = now;
            return held;
        }

        /**
         * Gives the lock back. A failure to do so is not reported: the operation under the lock is
         * done, and the lock passes to the next claimer one lease later.
         */
        @Override
        public void close() {
            if (!held) {
                return;
            }
            held = false;
            try {
                locks.updateOne(
                        new BsonDocument("_id", new BsonString(ID)).append(HOLDER, token),
                        new BsonDocument("$set", new BsonDocument(HOLDER, BsonNull.VALUE))
                                .append("$inc", new BsonDocument(VERSION, new BsonInt64(1))));
            } catch (MongoException e) {
                // The lease ends it.
            }
        }
    }
}
