package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.idIn;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertManyOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * The bucket locks of one outbox (docs/scale-out.md, "No lock shared by every claimer"): one lock
 * document {@code {_id: "bucket-<n>", holder, version}} per bucket in the collection {@code <outbox
 * collection>.lock}, created the first time it is taken. Parking keyed messages (a claim) and
 * taking keyed messages out of their key's way (complete, discard, dead-letter when dead letters do
 * not block) hold the locks of their keys' buckets for the few milliseconds of their reads and
 * writes, so the two are serialised per bucket ({@link KeyOrder}); claims and removals of different
 * buckets never wait for each other, and a claim that parks nothing takes no lock.
 *
 * <p>Taking locks is one {@code updateMany} ({@code holder: null} → this holder) and one read of
 * which were had. A holder renews its locks by bumping their {@code version} while it works, and
 * gives them back by clearing {@code holder}. A holder that crashed is recognised without comparing
 * clocks across machines: a waiter that sees the same {@code holder} and {@code version} on a lock
 * for a whole {@link #LEASE lease} by its own monotonic clock takes it over with a compare-and-set
 * on both. A holder therefore stops writing under its locks once a lease has passed since its last
 * renewal ({@link Held#renew()} tells it).
 *
 * <p>{@link #acquire} waits for every lock it needs, at most {@link #WAIT}, and holds while it
 * waits only the locks below the lowest one another holder has: two removals that need overlapping
 * buckets therefore never wait for each other in a circle. {@link #tryAcquire} (the claim's
 * parking) takes what is free at once and never waits.
 *
 * <p>What this cannot exclude: a holder paused (for example by a garbage collector) for longer than
 * a lease between its last check and a write; MongoDB has no fencing across documents without
 * transactions. The lease is many times longer than a lock is ever held.
 */
final class BucketLocks {
    /** How long a holder that neither renews nor releases keeps a lock. */
    static final Duration LEASE = Duration.ofSeconds(3);

    /**
     * How long a removal waits for its locks before it fails: longer than a lease, so a crashed
     * holder never makes anyone fail.
     */
    static final Duration WAIT = Duration.ofSeconds(10);

    /** The {@code _id} of bucket {@code b}'s lock is this prefix followed by {@code b}. */
    static final String ID_PREFIX = "bucket-";

    private static final String ID = "_id";
    private static final String HOLDER = "holder";
    private static final String VERSION = "version";

    private final MongoCollection<BsonDocument> locks;
    private final long leaseNanos;
    private final long waitNanos;

    BucketLocks(MongoCollection<BsonDocument> locks, Duration lease, Duration wait) {
        this.locks = locks;
        this.leaseNanos = lease.toNanos();
        this.waitNanos = wait.toNanos();
    }

    /** The lease of these locks. */
    Duration lease() {
        return Duration.ofNanos(leaseNanos);
    }

    /** The {@code _id} of a bucket's lock document. */
    static BsonString idOf(int bucket) {
        return new BsonString(ID_PREFIX + bucket);
    }

    /**
     * Takes the locks of the given buckets, waiting a bounded time for those another holder has.
     *
     * @param what the operation that needs them, for the error message
     * @throws io.outbox4j.api.OutboxException if they cannot all be had within the wait, or the
     *     thread is interrupted while waiting (none is then held)
     * @throws MongoException if the server fails (none is then held)
     */
    Held acquire(String what, Collection<Integer> buckets) {
        TreeSet<Integer> wanted = new TreeSet<>(buckets);
        Held held = new Held(System.nanoTime());
        if (wanted.isEmpty()) {
            return held;
        }
        long deadline = System.nanoTime() + waitNanos;
        Map<Integer, Seen> seen = new HashMap<>();
        int pauses = 0;
        int ceiling = -1; // while waiting: the lock waited for, and none above it is tried
        try {
            while (true) {
                TreeSet<Integer> pending =
                        new TreeSet<>(ceiling < 0 ? wanted : wanted.headSet(ceiling, true));
                pending.removeAll(held.buckets);
                int blocked = grab(held, pending, seen);
                if (blocked < 0) {
                    if (held.buckets.size() == wanted.size()) {
                        return held;
                    }
                    ceiling = -1; // the lock waited for was had: go on with the rest at once
                    continue;
                }
                // hold nothing above the first lock another holder has while waiting for it
                ceiling = blocked;
                held.releaseAbove(blocked);
                if (!held.renew()) {
                    throw Failures.of(
                            "MongoDB outbox "
                                    + locks.getNamespace()
                                    + ": "
                                    + what
                                    + " lost bucket locks while waiting for others (paused for"
                                    + " longer than their "
                                    + lease().toMillis()
                                    + " ms lease); try again");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw Failures.of(
                            "MongoDB outbox "
                                    + locks.getNamespace()
                                    + ": "
                                    + what
                                    + " waited "
                                    + Duration.ofNanos(waitNanos).toMillis()
                                    + " ms for the lock of bucket "
                                    + blocked
                                    + ", held by another claimer all along; try again");
                }
                pause(pauses++, what);
            }
        } catch (RuntimeException e) {
            held.close();
            throw e;
        }
    }

    /**
     * Takes the locks of the given buckets that are free now, without waiting.
     *
     * @return the locks had (perhaps none)
     * @throws MongoException if the server fails (none is then held)
     */
    Held tryAcquire(Collection<Integer> buckets) {
        Held held = new Held(System.nanoTime());
        if (buckets.isEmpty()) {
            return held;
        }
        try {
            grab(held, new TreeSet<>(buckets), null);
            return held;
        } catch (RuntimeException e) {
            held.close();
            throw e;
        }
    }

    /** A lock another holder has: who and which version, and since when (monotonic) unchanged. */
    private record Seen(BsonValue holder, long version, long since) {}

    /**
     * One round: takes the free locks among {@code pending} (creating missing lock documents) and,
     * when {@code seen} is given, takes over those unchanged for a lease.
     *
     * @return the lowest bucket not had, or -1 when all were had
     */
    private int grab(Held held, SortedSet<Integer> pending, @Nullable Map<Integer, Seen> seen) {
        BsonArray ids = new BsonArray();
        pending.forEach(b -> ids.add(idOf(b)));
        BsonDocument in = idIn(ids);
        locks.updateMany(in.clone().append(HOLDER, BsonNull.VALUE), take(held.token));
        Map<String, BsonDocument> docs = new HashMap<>();
        for (BsonDocument d : locks.find(in)) {
            docs.put(d.getString(ID).getValue(), d);
        }
        int blocked = -1;
        List<BsonDocument> missing = new ArrayList<>();
        List<Integer> missingBuckets = new ArrayList<>();
        long now = System.nanoTime();
        for (int b : pending) {
            BsonDocument d = docs.get(ID_PREFIX + b);
            if (d == null) {
                missing.add(
                        new BsonDocument(ID, idOf(b))
                                .append(HOLDER, held.token)
                                .append(VERSION, new BsonInt64(1)));
                missingBuckets.add(b);
                continue;
            }
            BsonValue holder = d.get(HOLDER, BsonNull.VALUE);
            if (held.token.equals(holder)) {
                held.buckets.add(b);
                continue;
            }
            if (seen != null && !holder.isNull()) {
                BsonValue version = d.get(VERSION, BsonNull.VALUE);
                long v = version.isNumber() ? version.asNumber().longValue() : Long.MIN_VALUE + 1;
                Seen s = seen.get(b);
                if (s == null || !s.holder().equals(holder) || s.version() != v) {
                    seen.put(b, new Seen(holder, v, now));
                } else if (now - s.since() >= leaseNanos) {
                    // Neither renewed nor released for a whole lease: its holder is gone.
                    BsonDocument same =
                            new BsonDocument(ID, idOf(b))
                                    .append(HOLDER, holder)
                                    .append(VERSION, version);
                    if (locks.updateOne(same, take(held.token)).getMatchedCount() == 1) {
                        held.buckets.add(b);
                        seen.remove(b);
                        continue;
                    }
                }
            }
            if (blocked < 0) {
                blocked = b; // pending is ascending: the lowest
            }
        }
        if (!missing.isEmpty()) {
            Set<Integer> lost = insert(missing, missingBuckets);
            for (int b : missingBuckets) {
                if (lost.contains(b)) {
                    blocked = blocked < 0 ? b : Math.min(blocked, b);
                } else {
                    held.buckets.add(b);
                }
            }
        }
        return blocked;
    }

    /**
     * Creates lock documents taken by this holder.
     *
     * @return the buckets whose document another holder created first
     */
    private Set<Integer> insert(List<BsonDocument> docs, List<Integer> buckets) {
        try {
            locks.insertMany(docs, new InsertManyOptions().ordered(false));
            return Set.of();
        } catch (MongoBulkWriteException e) {
            Set<Integer> lost = new HashSet<>();
            for (BulkWriteError error : e.getWriteErrors()) {
                if (ErrorCategory.fromErrorCode(error.getCode()) != ErrorCategory.DUPLICATE_KEY) {
                    throw e;
                }
                lost.add(buckets.get(error.getIndex()));
            }
            return lost;
        }
    }

    private static BsonDocument take(BsonString token) {
        return new BsonDocument("$set", new BsonDocument(HOLDER, token))
                .append("$inc", new BsonDocument(VERSION, new BsonInt64(1)));
    }

    private void pause(int pauses, String what) {
        Pause.beforeRound(
                pauses,
                500,
                "MongoDB outbox "
                        + locks.getNamespace()
                        + ": "
                        + what
                        + " was interrupted while waiting for bucket locks");
    }

    /** Bucket locks, held. Closing gives them back. */
    final class Held implements AutoCloseable {
        private final BsonString token = new BsonString(Receipt.newToken());
        private final TreeSet<Integer> buckets = new TreeSet<>();
        private long renewedAt;
        private boolean lost;

        /**
         * @param renewedAt when the first of these locks was asked for (monotonic): a lease from
         *     then on is the earliest another holder may take one over
         */
        private Held(long renewedAt) {
            this.renewedAt = renewedAt;
        }

        /** Whether the lock of this bucket is held. */
        boolean holds(int bucket) {
            return !lost && buckets.contains(bucket);
        }

        /** The buckets whose lock is held. */
        Set<Integer> buckets() {
            return lost ? Set.of() : Set.copyOf(buckets);
        }

        /**
         * Makes sure the locks are still held before a write under them: renews them once a quarter
         * of the lease has passed since the last renewal.
         *
         * @return {@code false} if one was lost (a lease passed without renewal and another holder
         *     took it over); the caller then writes nothing more under them
         */
        boolean renew() {
            if (lost) {
                return false;
            }
            long now = System.nanoTime();
            if (buckets.isEmpty() || now - renewedAt < leaseNanos / 4) {
                return true;
            }
            long matched =
                    locks.updateMany(
                                    mine(buckets),
                                    new BsonDocument(
                                            "$inc", new BsonDocument(VERSION, new BsonInt64(1))))
                            .getMatchedCount();
            renewedAt = now;
            lost = matched < buckets.size();
            return !lost;
        }

        /** Gives back the locks of buckets above {@code bucket}. */
        private void releaseAbove(int bucket) {
            TreeSet<Integer> above = new TreeSet<>(buckets.tailSet(bucket, false));
            if (!above.isEmpty()) {
                release(above);
                buckets.removeAll(above);
            }
        }

        private BsonDocument mine(Collection<Integer> of) {
            BsonArray ids = new BsonArray();
            of.forEach(b -> ids.add(idOf(b)));
            return idIn(ids).append(HOLDER, token);
        }

        private void release(Collection<Integer> of) {
            locks.updateMany(
                    mine(of),
                    new BsonDocument("$set", new BsonDocument(HOLDER, BsonNull.VALUE))
                            .append("$inc", new BsonDocument(VERSION, new BsonInt64(1))));
        }

        /**
         * Gives the locks back. A failure to do so is not reported: the operation under them is
         * done, and the locks pass to the next holder one lease later.
         */
        @Override
        public void close() {
            if (buckets.isEmpty()) {
                return;
            }
            try {
                release(buckets);
            } catch (MongoException e) {
                // The lease ends them.
            } finally {
                buckets.clear();
                lost = true;
            }
        }
    }
}
