package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.AVAILABLE_AT;
import static io.outbox4j.store.mongo.Documents.BUCKET;
import static io.outbox4j.store.mongo.Documents.ID;
import static io.outbox4j.store.mongo.Documents.KEY;
import static io.outbox4j.store.mongo.Documents.PARKED;
import static io.outbox4j.store.mongo.Documents.PARKED_BEHIND;
import static io.outbox4j.store.mongo.Documents.SEQ;
import static io.outbox4j.store.mongo.Documents.ascending;
import static io.outbox4j.store.mongo.Documents.fields;
import static io.outbox4j.store.mongo.Documents.idIn;

import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.outbox4j.api.Buckets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * Per-key order on one collection: which earlier messages of a key are still in the way of its
 * candidates (for the claim), and unparking a key when an earlier message leaves (for complete,
 * discard and, when dead letters do not block, dead-letter). Parking and unparking of a key run
 * under the lock of its bucket ({@link BucketLocks}).
 *
 * <h2>Parking and the {@code parkedBehind} mark</h2>
 *
 * A claim parks a keyed candidate ({@code parked: true}, which takes it out of the claim index)
 * when an earlier message of its key that is still in the outbox is not taken before it in the same
 * claim, and marks {@code parkedBehind: true} on a message of that key enqueued before the lowest
 * message it parked. Removing a message that carries the mark unparks the first {@value
 * #UNPARK_LIMIT} parked messages of its key (by {@code seq}); when more stay parked, the last one
 * unparked gets the mark. So, at every moment, the lowest parked message of a key has a marked
 * message of its key in the outbox before it, and no message stays parked behind a key with nothing
 * left in front of it. Removals of unmarked messages (the common case: nothing waited behind them)
 * cost nothing extra.
 *
 * <p>Without multi-document transactions every step is ordered so that a crash between two writes
 * is harmless: the mark is written before the parking, the unparking before the removal. A crash
 * after the mark leaves a mark nothing waits behind (one needless unpark later); a crash after the
 * unparking leaves messages unparked that are still blocked, and the next claim parks them again.
 */
final class KeyOrder {
    /** The most parked messages of one key that one removal unparks. */
    static final int UNPARK_LIMIT = 1000;

    /** The least time between two sweeps for messages parked behind nothing, per store. */
    static final Duration SWEEP_EVERY = Duration.ofSeconds(30);

    /** The most parked messages one sweep reads. */
    static final int SWEEP_LIMIT = 1000;

    private static final System.Logger LOG = System.getLogger(KeyOrder.class.getName());

    /** The most keys one query for the claim asks about (the most {@code $or} branches). */
    static final int MAX_KEYS_PER_QUERY = 100;

    private final MongoCollection<BsonDocument> collection;
    private final BucketLocks locks;
    private final boolean deadLettersBlock;
    private volatile long nextSweepNanos = System.nanoTime();

    KeyOrder(
            MongoCollection<BsonDocument> collection, BucketLocks locks, boolean deadLettersBlock) {
        this.collection = collection;
        this.locks = locks;
        this.deadLettersBlock = deadLettersBlock;
    }

    /**
     * Runs a write that takes messages out of their key's way (deletes them, or dead-letters them
     * when dead letters do not block). Without keyed messages among them it just runs. Otherwise it
     * runs under the locks of their keys' buckets, after unparking the keys of those that carry the
     * mark: the marks are read under the locks, where no claim can add one, and the unparking is
     * written before the removal, so a crash between the two leaves nothing parked for good.
     *
     * @param what the operation, for errors
     * @param keyed the keyed messages the write may take out of their key's way: id → key
     * @param removal the write
     * @throws io.outbox4j.api.OutboxException if the locks cannot be had, or are lost before the
     *     removal (nothing is then removed)
     */
    <T> T removing(String what, Map<BsonValue, String> keyed, Supplier<T> removal) {
        if (keyed.isEmpty()) {
            return removal.get();
        }
        Set<Integer> buckets = new HashSet<>();
        keyed.values().forEach(key -> buckets.add(Buckets.of(key)));
        try (BucketLocks.Held held = locks.acquire(what, buckets)) {
            Set<String> marked = new HashSet<>();
            for (BsonDocument d :
                    collection
                            .find(idIn(keyed.keySet()).append(PARKED_BEHIND, BsonBoolean.TRUE))
                            .projection(fields(KEY))) {
                String key = Documents.keyOf(d);
                if (key != null) {
                    marked.add(key);
                }
            }
            if (!marked.isEmpty()) {
                unpark(marked);
            }
            if (!held.renew()) {
                throw Failures.of(
                        "MongoDB outbox "
                                + collection.getNamespace()
                                + ": "
                                + what
                                + " lost its bucket locks (paused for longer than their "
                                + locks.lease().toMillis()
                                + " ms lease); nothing was removed");
            }
            return removal.get();
        }
    }

    /** The bucket locks that parking and removals of keyed messages hold. */
    BucketLocks locks() {
        return locks;
    }

    boolean deadLettersBlock() {
        return deadLettersBlock;
    }

    /**
     * Adds the condition every key query carries: nothing when dead letters block (every message of
     * a key counts), {@code availableAt: {$exists: true}} when they do not (dead letters have no
     * availability and drop out). It matches the key index's partial filter either way.
     */
    BsonDocument scoped(BsonDocument filter) {
        if (!deadLettersBlock) {
            filter.append(AVAILABLE_AT, new BsonDocument("$exists", BsonBoolean.TRUE));
        }
        return filter;
    }

    /** The key index's partial filter: keyed messages that count as earlier for their key. */
    BsonDocument keyIndexFilter() {
        return scoped(new BsonDocument(KEY, new BsonDocument("$exists", BsonBoolean.TRUE)));
    }

    /** A message of a key in enqueue order: its id, seq and whether it carries the mark. */
    record Entry(BsonValue id, long seq, boolean marked) {}

    /** What the claim asks about one key of a page of candidates. */
    record Ask(String key, @Nullable Long after, long upTo, int candidates) {}

    /**
     * For each key, its messages still in the outbox (and counting) with {@code after < seq <=
     * upTo}, in {@code seq} order: all of them, or at least the first {@code candidates}. That is
     * enough for the claim: a candidate can be taken exactly when it is the next entry of its key
     * after the ones this claim took.
     *
     * <p>One query covers up to {@value #MAX_KEYS_PER_QUERY} keys ({@code $or} of one range per
     * key, sorted by key and seq, with a limit); a key whose range was cut off is asked again, so a
     * key with a long line of waiting messages costs its own query and never makes the others read
     * its line.
     */
    Map<String, List<Entry>> prefixes(Collection<Ask> asks) {
        Map<String, Ask> open = new LinkedHashMap<>();
        for (Ask a : asks) {
            open.put(a.key(), a);
        }
        Map<String, List<Entry>> found = new HashMap<>();
        while (!open.isEmpty()) {
            List<Ask> batch = open.values().stream().limit(MAX_KEYS_PER_QUERY).toList();
            BsonArray branches = new BsonArray();
            int wanted = 16;
            for (Ask a : batch) {
                BsonDocument range = new BsonDocument("$lte", new BsonInt64(a.upTo()));
                if (a.after() != null) {
                    range.append("$gt", new BsonInt64(a.after()));
                }
                branches.add(
                        scoped(new BsonDocument(KEY, new BsonString(a.key())).append(SEQ, range)));
                wanted += a.candidates() + 2;
            }
            BsonDocument filter =
                    branches.size() == 1
                            ? branches.get(0).asDocument()
                            : new BsonDocument("$or", branches);
            Map<String, List<Entry>> round = new LinkedHashMap<>();
            int rows = 0;
            String last = null;
            for (BsonDocument d :
                    collection
                            .find(filter)
                            .projection(fields(ID, KEY, SEQ, PARKED_BEHIND))
                            .sort(ascending(KEY, SEQ))
                            .limit(wanted)
                            .batchSize(wanted)) {
                last = d.getString(KEY).getValue();
                round.computeIfAbsent(last, k -> new ArrayList<>()).add(entry(d));
                rows++;
            }
            boolean cut = rows == wanted;
            for (Ask a : batch) {
                String key = a.key();
                List<Entry> entries = round.getOrDefault(key, List.of());
                boolean complete =
                        !cut
                                || (last != null && mongoOrder(key, last) < 0)
                                || entries.size() >= a.candidates();
                if (complete) {
                    found.put(key, entries);
                    open.remove(key);
                }
            }
        }
        return found;
    }

    /**
     * Compares two keys as MongoDB sorts strings without a collation: by their UTF-8 bytes, which
     * is code point order (Java's {@code compareTo} compares UTF-16 units, which differs above
     * U+FFFF).
     */
    static int mongoOrder(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    private static Entry entry(BsonDocument d) {
        BsonValue mark = d.get(PARKED_BEHIND);
        return new Entry(
                Documents.idOf(d),
                Documents.seqOf(d),
                mark != null && mark.isBoolean() && mark.asBoolean().getValue());
    }

    /**
     * At most every {@link #SWEEP_EVERY} per store, unparks the keys of the renewing member's
     * buckets left parked behind nothing ({@link #unparkOrphans}); a failure is left to the next
     * sweep.
     */
    void sweep(List<Integer> buckets, MongoNamespace namespace) {
        long now = System.nanoTime();
        if (buckets.isEmpty() || now - nextSweepNanos < 0) {
            return;
        }
        nextSweepNanos = now + SWEEP_EVERY.toNanos();
        try {
            Set<String> unparked = unparkOrphans(buckets, SWEEP_LIMIT);
            if (!unparked.isEmpty()) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "unparked {0} keys of {1} that waited behind nothing (parked by a relay of"
                                + " an older version during a rolling upgrade?)",
                        unparked.size(),
                        namespace);
            }
        } catch (MongoException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the sweep for messages parked behind nothing failed on {0}; the next renewal"
                            + " after {1} tries again: {2}",
                    namespace,
                    SWEEP_EVERY,
                    e.toString());
        }
    }

    /**
     * Unparks the keys of the given buckets whose lowest parked message has no earlier message of
     * its key left in the outbox, reading at most {@code limit} parked messages; parked messages
     * without a stored bucket (written by a version before buckets) are looked at too. Nothing in
     * this version leaves such a message behind (parking and the removal of the message it waits
     * behind are serialised by their bucket's lock), but a relay of an older version, parking under
     * the old claim lock beside relays of this one during a rolling upgrade, can, and without this
     * its key would wait for good. Unparking is always safe: a claim parks a message again if it is
     * still blocked. Served by the parked index ({@code {key, seq}}, partial on {@code parked:
     * true}).
     *
     * @return the keys unparked
     */
    Set<String> unparkOrphans(Collection<Integer> buckets, int limit) {
        if (buckets.isEmpty()) {
            return Set.of();
        }
        BsonArray in = new BsonArray();
        buckets.forEach(b -> in.add(new BsonInt32(b)));
        Map<String, Long> lowest = new LinkedHashMap<>();
        for (BsonDocument d :
                collection
                        .find(
                                scoped(
                                        new BsonDocument(PARKED, BsonBoolean.TRUE)
                                                .append(
                                                        "$or",
                                                        new BsonArray(
                                                                List.of(
                                                                        new BsonDocument(
                                                                                BUCKET,
                                                                                new BsonDocument(
                                                                                        "$in", in)),
                                                                        new BsonDocument(
                                                                                BUCKET,
                                                                                new BsonDocument(
                                                                                        "$exists",
                                                                                        BsonBoolean
                                                                                                .FALSE)))))))
                        .projection(fields(KEY, SEQ))
                        .sort(ascending(KEY, SEQ))
                        .limit(limit)
                        .batchSize(limit)) {
            String key = Documents.keyOf(d);
            if (key != null) {
                lowest.putIfAbsent(key, Documents.seqOf(d));
            }
        }
        if (lowest.isEmpty()) {
            return Set.of();
        }
        List<Ask> asks = new ArrayList<>();
        lowest.forEach((key, seq) -> asks.add(new Ask(key, null, seq - 1, 1)));
        Map<String, List<Entry>> earlier = prefixes(asks);
        Set<String> orphans = new TreeSet<>();
        lowest.keySet()
                .forEach(
                        key -> {
                            if (earlier.getOrDefault(key, List.of()).isEmpty()) {
                                orphans.add(key);
                            }
                        });
        if (!orphans.isEmpty()) {
            unpark(orphans);
        }
        return orphans;
    }

    /**
     * Unparks the first {@value #UNPARK_LIMIT} parked messages of each key by {@code seq}, marking
     * the last one unparked of a key that has more. One ordered bulk write (marks first) after
     * queries that read at most {@value #UNPARK_LIMIT} + 1 entries per key.
     */
    void unpark(Collection<String> keys) {
        TreeSet<String> open = new TreeSet<>(keys);
        List<WriteModel<BsonDocument>> marks = new ArrayList<>();
        List<WriteModel<BsonDocument>> unparks = new ArrayList<>();
        int roundSize = UNPARK_LIMIT + 1;
        while (!open.isEmpty()) {
            BsonArray names = new BsonArray();
            open.forEach(k -> names.add(new BsonString(k)));
            Map<String, List<Entry>> round = new LinkedHashMap<>();
            int rows = 0;
            String last = null;
            for (BsonDocument d :
                    collection
                            .find(
                                    scoped(
                                            new BsonDocument(KEY, new BsonDocument("$in", names))
                                                    .append(PARKED, BsonBoolean.TRUE)))
                            .projection(fields(ID, KEY, SEQ))
                            .sort(ascending(KEY, SEQ))
                            .limit(roundSize)
                            .batchSize(roundSize)) {
                last = d.getString(KEY).getValue();
                round.computeIfAbsent(last, k -> new ArrayList<>()).add(entry(d));
                rows++;
            }
            boolean cut = rows == roundSize;
            for (String key : new ArrayList<>(open)) {
                List<Entry> parked = round.getOrDefault(key, List.of());
                boolean more = parked.size() > UNPARK_LIMIT;
                boolean complete = !cut || (last != null && mongoOrder(key, last) < 0) || more;
                if (!complete) {
                    continue;
                }
                open.remove(key);
                if (parked.isEmpty()) {
                    continue;
                }
                Entry bound = parked.get(Math.min(parked.size(), UNPARK_LIMIT) - 1);
                if (more) {
                    marks.add(
                            new UpdateOneModel<>(
                                    new BsonDocument(ID, bound.id()),
                                    new BsonDocument(
                                            "$set",
                                            new BsonDocument(PARKED_BEHIND, BsonBoolean.TRUE))));
                }
                unparks.add(
                        new UpdateManyModel<>(
                                scoped(
                                        new BsonDocument(KEY, new BsonString(key))
                                                .append(PARKED, BsonBoolean.TRUE)
                                                .append(
                                                        SEQ,
                                                        new BsonDocument(
                                                                "$lte",
                                                                new BsonInt64(bound.seq())))),
                                new BsonDocument(
                                        "$set", new BsonDocument(PARKED, BsonBoolean.FALSE))));
            }
        }
        if (unparks.isEmpty()) {
            return;
        }
        List<WriteModel<BsonDocument>> writes = new ArrayList<>(marks);
        writes.addAll(unparks);
        collection.bulkWrite(writes, new BulkWriteOptions().ordered(true));
    }
}
