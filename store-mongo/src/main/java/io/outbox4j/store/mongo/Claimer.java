package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.ATTEMPTS;
import static io.outbox4j.store.mongo.Documents.AVAILABLE_AT;
import static io.outbox4j.store.mongo.Documents.BUCKET;
import static io.outbox4j.store.mongo.Documents.ID;
import static io.outbox4j.store.mongo.Documents.KEY;
import static io.outbox4j.store.mongo.Documents.OWNER;
import static io.outbox4j.store.mongo.Documents.PARKED;
import static io.outbox4j.store.mongo.Documents.PARKED_BEHIND;
import static io.outbox4j.store.mongo.Documents.RECEIPT;
import static io.outbox4j.store.mongo.Documents.SEQ;
import static io.outbox4j.store.mongo.Documents.ascending;
import static io.outbox4j.store.mongo.Documents.fields;
import static io.outbox4j.store.mongo.Documents.idIn;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.outbox4j.api.Buckets;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.jspecify.annotations.Nullable;

/**
 * One claim (docs/per-key-order.md, "Claim"): read a page of candidates in claim order, find for
 * each key of the page the earlier messages still in its way ({@link KeyOrder#prefixes}), take
 * unkeyed candidates and keyed ones that are next in their key, park the others under their
 * buckets' locks ({@link #park}), and lease; up to {@value #MAX_PAGES} pages (the first of {@code
 * limit} rows, each next one twice as large up to {@value #MAX_PAGE_ROWS}) while candidates were
 * blocked and the limit is not reached. No lock is shared by every claimer: two claims that read
 * the same candidate both try to lease it with a write that repeats the claim predicate, one wins,
 * and the leased documents are read back to keep only this claim's ({@link #readBack}).
 *
 * <p>A claim {@linkplain ClaimRequest#member() as a member} first asks {@link Members#claimable}
 * (by the server's clock) which buckets it may take keyed messages of, and adds {@code $or:
 * [{bucket: {$exists: false}}, {bucket: {$in: owned}}]} to the candidate query (only {@code bucket:
 * {$exists: false}} when it owns none): unkeyed messages, which have no bucket, are anybody's.
 * Keyed candidates without a {@code bucket} (enqueued by a version without membership) get it
 * computed and written, and are passed over unless the member owns it; written once, the query
 * leaves them out for the other members, so none is ever stuck.
 */
final class Claimer {
    /** The most candidate pages one claim reads. */
    static final int MAX_PAGES = 8;

    /**
     * The largest page after the first: pages double from {@code limit} up to this many rows (or
     * {@code limit}, if larger). Parked rows leave the claim index for good, so reading more of
     * them in one claim costs nothing over the outbox's life, and a claim with a small limit still
     * gets past a long line of waiting messages (those behind a head whose retry time is later than
     * their own enqueue time) to the head itself.
     */
    static final int MAX_PAGE_ROWS = 1000;

    /** Dead-letters a leased document that does not hold a valid message. */
    interface Quarantine {
        void deadLetter(
                BsonValue id, BsonString owner, BsonString token, String reason, Instant at);
    }

    private final MongoCollection<BsonDocument> collection;
    private final KeyOrder keys;
    private final Quarantine quarantine;
    private final Clock clock;
    private final Members members;

    Claimer(
            MongoCollection<BsonDocument> collection,
            KeyOrder keys,
            Quarantine quarantine,
            Clock clock,
            Members members) {
        this.collection = collection;
        this.keys = keys;
        this.quarantine = quarantine;
        this.clock = clock;
        this.members = members;
    }

    /** A candidate this claim took: where it stood before, to give it back if need be. */
    private record Taken(BsonValue id, @Nullable String key, BsonValue availableAt) {}

    /** The claim predicate: not dead, not parked, due. Matches the claim index's partial filter. */
    static BsonDocument claimable(long now) {
        return new BsonDocument(PARKED, BsonBoolean.FALSE)
                .append(
                        AVAILABLE_AT,
                        new BsonDocument("$exists", BsonBoolean.TRUE)
                                .append("$lte", new BsonInt64(now)));
    }

    List<Delivery> claim(ClaimRequest request) {
        BsonString owner = new BsonString(request.owner());
        BsonString token = new BsonString(Receipt.newToken());
        int limit = request.limit();
        List<Taken> taken = new ArrayList<>();
        Map<String, Long> lastTaken = new HashMap<>();
        // a member's claim is timed by the server's clock, read at its start
        // (docs/scale-out.md, "Clocks"); other claims by the claimer's
        Instant at = request.member() ? members.serverNow() : request.now();
        long now = Nanos.of(at);
        BsonDocument lease =
                new BsonDocument(
                                "$set",
                                new BsonDocument(
                                                AVAILABLE_AT,
                                                new BsonInt64(Nanos.of(at.plus(request.lease()))))
                                        .append(OWNER, owner)
                                        .append(RECEIPT, token))
                        .append("$inc", new BsonDocument(ATTEMPTS, new BsonInt32(1)));
        // null: every bucket (a claim not as a member, or a member that owns them all)
        Set<Integer> owned = request.member() ? members.claimable(request.owner()) : null;
        if (owned != null && owned.size() == Buckets.COUNT) {
            owned = null;
        }
        BsonDocument candidates = inBuckets(claimable(now), owned);
        long won = 0; // leases this claim wrote
        for (int page = 0; page < MAX_PAGES && won < limit; page++) {
            int pageSize = Math.max(limit, (int) Math.min(MAX_PAGE_ROWS, (long) limit << page));
            List<BsonDocument> read =
                    collection
                            .find(candidates)
                            .projection(fields(ID, KEY, BUCKET, SEQ, AVAILABLE_AT))
                            .sort(ascending(AVAILABLE_AT, SEQ))
                            .limit(pageSize)
                            .batchSize(pageSize)
                            .into(new ArrayList<>());
            List<BsonDocument> rows = owned == null ? read : ours(read, owned);
            boolean passedOver = rows.size() < read.size();
            Map<String, KeyOrder.Ask> asks = new LinkedHashMap<>();
            for (BsonDocument row : rows) {
                String key = orderKey(row);
                if (key != null) {
                    long seq = Documents.seqOf(row);
                    KeyOrder.Ask a = asks.get(key);
                    asks.put(
                            key,
                            a == null
                                    ? new KeyOrder.Ask(key, lastTaken.get(key), seq, 1)
                                    : new KeyOrder.Ask(
                                            key,
                                            a.after(),
                                            Math.max(a.upTo(), seq),
                                            a.candidates() + 1));
                }
            }
            Map<String, List<KeyOrder.Entry>> lines =
                    asks.isEmpty() ? Map.of() : keys.prefixes(asks.values());

            // Walk the page in claim order.
            List<Taken> take = new ArrayList<>();
            Map<String, List<BsonDocument>> parkedByKey = new LinkedHashMap<>();
            Map<String, Integer> next = new HashMap<>();
            int room = (int) (limit - won);
            for (BsonDocument row : rows) {
                if (take.size() == room) {
                    break; // the rest stays as it is
                }
                String key = orderKey(row);
                Taken t =
                        new Taken(
                                Documents.idOf(row), key, row.get(AVAILABLE_AT, new BsonInt64(0)));
                if (key == null) {
                    take.add(t);
                    continue;
                }
                List<KeyOrder.Entry> line = lines.getOrDefault(key, List.of());
                int i = next.getOrDefault(key, 0);
                if (i < line.size() && line.get(i).id().equals(Documents.idOf(row))) {
                    take.add(t);
                    next.put(key, i + 1);
                    lastTaken.put(key, Documents.seqOf(row));
                } else {
                    parkedByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(row);
                }
            }

            if (!parkedByKey.isEmpty()) {
                park(lines, parkedByKey);
            }
            boolean lostSome = false;
            if (!take.isEmpty()) {
                BsonArray ids = new BsonArray();
                take.forEach(t -> ids.add(t.id()));
                long leased =
                        collection
                                .updateMany(
                                        claimable(now).append(ID, new BsonDocument("$in", ids)),
                                        lease)
                                .getMatchedCount();
                won += leased;
                taken.addAll(take);
                lostSome = leased < take.size();
            }
            // Candidates another claim leased first (claims share no lock) are no longer
            // claimable: read again. Rows left unparked (their bucket's lock was busy) are read
            // again by the next, larger page, like those passed over.
            if (!lostSome && (read.size() < pageSize || (parkedByKey.isEmpty() && !passedOver))) {
                break;
            }
        }
        return taken.isEmpty() ? List.of() : readBack(owner, token, taken);
    }

    /**
     * Parks the candidates found waiting behind an earlier message of their key, under the locks of
     * their buckets that are free now (docs/scale-out.md, "No lock shared by every claimer"); the
     * candidates of busy buckets stay as they are, and a later claim parks them. Under the locks it
     * writes the mark on the message each key's lowest parked candidate waits behind, then reads
     * which of those messages are still there (they were found before the locks were had, and a
     * removal may have taken one since), and parks only the candidates of keys whose message is:
     * while the locks are held no removal can take it away, and its removal later sees the mark and
     * unparks the key.
     */
    private void park(
            Map<String, List<KeyOrder.Entry>> lines, Map<String, List<BsonDocument>> parkedByKey) {
        Set<Integer> buckets = new HashSet<>();
        parkedByKey.keySet().forEach(key -> buckets.add(Buckets.of(key)));
        try (BucketLocks.Held held = keys.locks().tryAcquire(buckets)) {
            Map<String, KeyOrder.Entry> behindByKey = new LinkedHashMap<>();
            BsonArray marks = new BsonArray();
            BsonArray witnesses = new BsonArray();
            parkedByKey.forEach(
                    (key, parked) -> {
                        KeyOrder.Entry behind = witness(lines.getOrDefault(key, List.of()), parked);
                        if (behind == null || !held.holds(Buckets.of(key))) {
                            return; // nothing to park behind, or its bucket is busy
                        }
                        behindByKey.put(key, behind);
                        witnesses.add(behind.id());
                        if (!behind.marked()) {
                            marks.add(behind.id());
                        }
                    });
            if (behindByKey.isEmpty() || !held.renew()) {
                return;
            }
            if (!marks.isEmpty()) {
                collection.updateMany(
                        idIn(marks),
                        new BsonDocument(
                                "$set", new BsonDocument(PARKED_BEHIND, BsonBoolean.TRUE)));
            }
            Set<BsonValue> present = new HashSet<>();
            for (BsonDocument d : collection.find(idIn(witnesses)).projection(fields(ID))) {
                present.add(Documents.idOf(d));
            }
            BsonArray park = new BsonArray();
            behindByKey.forEach(
                    (key, behind) -> {
                        if (present.contains(behind.id())) {
                            parkedByKey
                                    .getOrDefault(key, List.of())
                                    .forEach(row -> park.add(Documents.idOf(row)));
                        }
                    });
            if (!park.isEmpty() && held.renew()) {
                collection.updateMany(
                        idIn(park).append(PARKED, BsonBoolean.FALSE),
                        new BsonDocument("$set", new BsonDocument(PARKED, BsonBoolean.TRUE)));
            }
        }
    }

    /**
     * Narrows the candidate query to unkeyed messages and the keyed ones of the given buckets (and
     * those without a stored bucket, sorted out by {@link #ours}); {@code null} (every bucket)
     * leaves it as it is.
     */
    static BsonDocument inBuckets(BsonDocument filter, @Nullable Set<Integer> owned) {
        if (owned == null) {
            return filter;
        }
        BsonDocument noBucket =
                new BsonDocument(BUCKET, new BsonDocument("$exists", BsonBoolean.FALSE));
        if (owned.isEmpty()) {
            return filter.append(BUCKET, noBucket.get(BUCKET));
        }
        BsonArray buckets = new BsonArray();
        owned.forEach(b -> buckets.add(new BsonInt32(b)));
        return filter.append(
                "$or",
                new BsonArray(
                        List.of(
                                noBucket,
                                new BsonDocument(BUCKET, new BsonDocument("$in", buckets)))));
    }

    /**
     * The candidates of a member's claim it may take: all but the keyed ones of buckets it does not
     * own. Those can only be keyed messages without a stored bucket (the query leaves out the
     * others): their bucket is computed and written, so later queries sort them out themselves.
     */
    private List<BsonDocument> ours(List<BsonDocument> rows, Set<Integer> owned) {
        List<BsonDocument> ours = new ArrayList<>(rows.size());
        Map<Integer, BsonArray> missing = new HashMap<>();
        for (BsonDocument row : rows) {
            String key = orderKey(row);
            if (key == null) {
                ours.add(row);
                continue;
            }
            Integer bucket = Documents.bucketOf(row);
            if (bucket == null) {
                bucket = Buckets.of(key);
                missing.computeIfAbsent(bucket, b -> new BsonArray()).add(Documents.idOf(row));
            }
            if (owned.contains(bucket)) {
                ours.add(row);
            }
        }
        if (!missing.isEmpty()) {
            List<WriteModel<BsonDocument>> writes = new ArrayList<>();
            missing.forEach(
                    (bucket, ids) ->
                            writes.add(
                                    new UpdateManyModel<>(
                                            idIn(ids)
                                                    .append(
                                                            BUCKET,
                                                            new BsonDocument(
                                                                    "$exists", BsonBoolean.FALSE)),
                                            new BsonDocument(
                                                    "$set",
                                                    new BsonDocument(
                                                            BUCKET, new BsonInt32(bucket))))));
            collection.bulkWrite(writes, new BulkWriteOptions().ordered(false));
        }
        return ours;
    }

    /**
     * The key a candidate is ordered by, or null for an unkeyed one (and for a document without a
     * numeric {@code seq}, which this store never writes: it is taken and then quarantined).
     */
    private static @Nullable String orderKey(BsonDocument row) {
        BsonValue seq = row.get(SEQ);
        return seq != null && seq.isNumber() ? Documents.keyOf(row) : null;
    }

    /**
     * The message of a key that its lowest parked candidate waits behind: the entry just before it
     * in the key's line, or the last entry of the line when the line was read only in part.
     */
    private static KeyOrder.@Nullable Entry witness(
            List<KeyOrder.Entry> line, List<BsonDocument> parked) {
        long lowest = Long.MAX_VALUE;
        for (BsonDocument row : parked) {
            lowest = Math.min(lowest, Documents.seqOf(row));
        }
        KeyOrder.Entry before = null;
        for (KeyOrder.Entry e : line) {
            if (e.seq() >= lowest) {
                break;
            }
            before = e;
        }
        return before;
    }

    /**
     * Reads back the documents this claim leased and turns them into deliveries in claim order.
     * Should a candidate have changed hands between the page read and the lease (its previous,
     * expired lease was extended, released or finished by its old owner), the later messages of its
     * key that this claim leased are given back untried, so no key is handed out past a message
     * this claim does not hold. A document that is not a valid message is dead-lettered, and the
     * later messages of its key are given back too.
     */
    private List<Delivery> readBack(BsonString owner, BsonString token, List<Taken> taken) {
        BsonArray ids = new BsonArray();
        taken.forEach(t -> ids.add(t.id()));
        Map<BsonValue, BsonDocument> docs = new HashMap<>();
        for (BsonDocument d : collection.find(idIn(ids))) {
            docs.put(Documents.idOf(d), d);
        }
        Set<String> broken = new HashSet<>();
        List<Taken> giveBack = new ArrayList<>();
        List<Delivery> deliveries = new ArrayList<>(taken.size());
        for (Taken t : taken) {
            BsonDocument d = docs.get(t.id());
            boolean ours = d != null && token.equals(d.get(RECEIPT)) && owner.equals(d.get(OWNER));
            if (t.key() != null && broken.contains(t.key())) {
                if (ours) {
                    giveBack.add(t);
                }
                continue;
            }
            if (d == null || !ours) {
                if (t.key() != null) {
                    broken.add(t.key());
                }
                continue;
            }
            Message message;
            Instant enqueuedAt;
            try {
                message = Documents.decode(d);
                enqueuedAt = Documents.enqueuedAt(d);
            } catch (RuntimeException e) {
                // Not a message this store wrote: dead-letter it rather than fail every claim
                // that meets it.
                quarantine.deadLetter(
                        t.id(),
                        owner,
                        token,
                        "stored document is not a valid outbox message: " + e.getMessage(),
                        clock.instant());
                if (t.key() != null) {
                    broken.add(t.key());
                }
                continue;
            }
            deliveries.add(
                    new Delivery(
                            message,
                            new Receipt(token.getValue(), message.id()).toString(),
                            Documents.attempts(d),
                            enqueuedAt));
        }
        if (!giveBack.isEmpty()) {
            List<WriteModel<BsonDocument>> undo = new ArrayList<>();
            for (Taken t : giveBack) {
                undo.add(
                        new UpdateOneModel<>(
                                new BsonDocument(ID, t.id())
                                        .append(OWNER, owner)
                                        .append(RECEIPT, token),
                                new BsonDocument(
                                                "$set",
                                                new BsonDocument(AVAILABLE_AT, t.availableAt()))
                                        .append(
                                                "$inc",
                                                new BsonDocument(ATTEMPTS, new BsonInt32(-1)))
                                        .append(
                                                "$unset",
                                                new BsonDocument(OWNER, new BsonString(""))
                                                        .append(RECEIPT, new BsonString("")))));
            }
            collection.bulkWrite(undo, new BulkWriteOptions().ordered(false));
        }
        return deliveries;
    }
}
