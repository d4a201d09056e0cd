package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.ATTEMPTS;
import static io.outbox4j.store.mongo.Documents.AVAILABLE_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_REASON;
import static io.outbox4j.store.mongo.Documents.ENQUEUED_AT;
import static io.outbox4j.store.mongo.Documents.ID;
import static io.outbox4j.store.mongo.Documents.KEY;
import static io.outbox4j.store.mongo.Documents.LAST_ERROR;
import static io.outbox4j.store.mongo.Documents.OWNER;
import static io.outbox4j.store.mongo.Documents.RECEIPT;
import static io.outbox4j.store.mongo.Documents.fields;
import static io.outbox4j.store.mongo.Documents.idIn;

import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.outbox4j.api.Abandonment;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Release;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * What a lease holder does with its leases ({@link MongoOutboxStore}'s complete, release,
 * dead-letter, extend and abandon, documented there): compare-and-set writes on owner, lease token
 * and id. The removals (complete; dead-letter when dead letters do not block their key) go through
 * {@link KeyOrder#removing}, which unparks the keys that wait behind them under their buckets'
 * locks. The caller turns driver exceptions into the library's.
 */
final class Leasing {
    private final MongoCollection<BsonDocument> collection;
    private final KeyOrder keys;

    Leasing(MongoCollection<BsonDocument> collection, KeyOrder keys) {
        this.collection = collection;
        this.keys = keys;
    }

    Set<String> complete(Completion completion) {
        Set<String> stale = new HashSet<>();
        Leases leases = leases(completion.owner(), completion.receipts(), stale);
        if (leases.live.isEmpty()) {
            return inOrder(completion.receipts(), stale);
        }
        long deleted =
                keys.removing(
                        "complete",
                        leases.keyed,
                        () ->
                                collection
                                        .deleteMany(leasedBy(leases.owner, leases.live))
                                        .getDeletedCount());
        if (deleted < leases.count) {
            // Some leases changed hands between the look-up and the delete: those
            // documents still exist.
            Map<String, String> receiptById = new HashMap<>();
            leases.live.values().forEach(receiptById::putAll);
            for (BsonDocument d :
                    collection
                            .find(new BsonDocument(ID, in(receiptById.keySet())))
                            .projection(fields(ID))) {
                String receipt = receiptById.get(d.getString(ID).getValue());
                if (receipt != null) {
                    stale.add(receipt);
                }
            }
        }
        return inOrder(completion.receipts(), stale);
    }

    boolean release(Release release) {
        Optional<BsonDocument> lease = leasedBy(release.owner(), release.receipt());
        if (lease.isEmpty()) {
            return false;
        }
        BsonDocument update =
                new BsonDocument(
                                "$set",
                                new BsonDocument(
                                                AVAILABLE_AT,
                                                new BsonInt64(Nanos.of(release.availableAt())))
                                        .append(LAST_ERROR, new BsonString(release.error())))
                        .append("$unset", unsetLease());
        return collection.updateOne(lease.get(), update).getMatchedCount() == 1;
    }

    Set<String> extend(Extension extension) {
        Set<String> stale = new HashSet<>();
        Map<String, Map<String, String>> byToken = byToken(extension.receipts(), stale);
        if (byToken.isEmpty()) {
            return inOrder(extension.receipts(), stale);
        }
        BsonString owner = new BsonString(extension.owner());
        int asked = byToken.values().stream().mapToInt(Map::size).sum();
        long matched =
                collection
                        .updateMany(
                                leasedBy(owner, byToken),
                                new BsonDocument(
                                        "$set",
                                        new BsonDocument(
                                                AVAILABLE_AT,
                                                new BsonInt64(Nanos.of(extension.until())))))
                        .getMatchedCount();
        if (matched < asked) {
            leases(extension.owner(), extension.receipts(), stale);
        }
        return inOrder(extension.receipts(), stale);
    }

    Set<String> abandon(Abandonment abandonment) {
        Set<String> stale = new HashSet<>();
        Map<String, Map<String, String>> byToken = byToken(abandonment.receipts(), stale);
        if (byToken.isEmpty()) {
            return inOrder(abandonment.receipts(), stale);
        }
        BsonString owner = new BsonString(abandonment.owner());
        List<WriteModel<BsonDocument>> giveBack = new ArrayList<>();
        Map<BsonValue, String> receiptById = new HashMap<>();
        for (BsonDocument d :
                collection
                        .find(leasedBy(owner, byToken))
                        .projection(fields(RECEIPT, ENQUEUED_AT))) {
            String token = d.getString(RECEIPT).getValue();
            String id = d.getString(ID).getValue();
            String receipt = byToken.getOrDefault(token, Map.of()).get(id);
            if (receipt == null) {
                continue;
            }
            receiptById.put(Documents.idOf(d), receipt);
            BsonValue enqueuedAt = d.get(ENQUEUED_AT);
            giveBack.add(
                    new UpdateOneModel<>(
                            new BsonDocument(ID, Documents.idOf(d))
                                    .append(OWNER, owner)
                                    .append(RECEIPT, new BsonString(token)),
                            new BsonDocument(
                                            "$set",
                                            new BsonDocument(
                                                    AVAILABLE_AT,
                                                    new BsonInt64(
                                                            enqueuedAt != null
                                                                            && enqueuedAt.isInt64()
                                                                    ? Nanos.ofMicros(
                                                                            enqueuedAt
                                                                                    .asInt64()
                                                                                    .getValue())
                                                                    : 0)))
                                    .append("$inc", new BsonDocument(ATTEMPTS, new BsonInt32(-1)))
                                    .append("$unset", unsetLease())));
        }
        byToken.values()
                .forEach(
                        ids ->
                                ids.forEach(
                                        (id, receipt) -> {
                                            if (!receiptById.containsValue(receipt)) {
                                                stale.add(receipt);
                                            }
                                        }));
        if (giveBack.isEmpty()) {
            return inOrder(abandonment.receipts(), stale);
        }
        long matched =
                collection
                        .bulkWrite(giveBack, new BulkWriteOptions().ordered(false))
                        .getMatchedCount();
        if (matched < giveBack.size()) {
            // Some leases changed hands in between: those still leased (or gone)
            // were not given back by this call.
            for (BsonDocument d :
                    collection.find(idIn(receiptById.keySet())).projection(fields(RECEIPT))) {
                if (d.containsKey(RECEIPT)) {
                    stale.add(receiptById.get(d.get(ID)));
                }
                receiptById.remove(d.get(ID));
            }
            stale.addAll(receiptById.values()); // deleted meanwhile
        }
        return inOrder(abandonment.receipts(), stale);
    }

    boolean deadLetter(DeadLetter deadLetter) {
        Optional<Receipt> r = Receipt.parse(deadLetter.receipt());
        return r.isPresent()
                && deadLetterLeased(
                        new BsonString(r.get().messageId()),
                        new BsonString(deadLetter.owner()),
                        new BsonString(r.get().token()),
                        deadLetter.reason(),
                        deadLetter.at());
    }

    /** The leases an owner still holds among some receipts, read in one query by id. */
    private static final class Leases {
        final BsonString owner;

        /** token → id → receipt, of the leases the owner still holds. */
        final Map<String, Map<String, String>> live = new HashMap<>();

        /** The keyed ones: id → key. */
        final Map<BsonValue, String> keyed = new HashMap<>();

        /** How many (id, token) pairs are live. */
        int count;

        Leases(BsonString owner) {
            this.owner = owner;
        }
    }

    /**
     * Looks up which receipts name leases the owner still holds; the others are added to {@code
     * stale}.
     */
    private Leases leases(String owner, List<String> receipts, Set<String> stale) {
        Map<String, Map<String, String>> byToken = byToken(receipts, stale);
        Leases leases = new Leases(new BsonString(owner));
        if (byToken.isEmpty()) {
            return leases;
        }
        Set<String> allIds = new HashSet<>();
        byToken.values().forEach(ids -> allIds.addAll(ids.keySet()));
        for (BsonDocument d :
                collection
                        .find(new BsonDocument(ID, in(allIds)))
                        .projection(fields(ID, RECEIPT, OWNER, KEY))) {
            BsonValue token = d.get(RECEIPT);
            if (token == null || !token.isString() || !leases.owner.equals(d.get(OWNER))) {
                continue;
            }
            String id = d.getString(ID).getValue();
            String receipt = byToken.getOrDefault(token.asString().getValue(), Map.of()).get(id);
            if (receipt != null) {
                leases.live
                        .computeIfAbsent(token.asString().getValue(), t -> new HashMap<>())
                        .put(id, receipt);
                leases.count++;
                String key = Documents.keyOf(d);
                if (key != null) {
                    leases.keyed.put(Documents.idOf(d), key);
                }
            }
        }
        byToken.forEach(
                (token, ids) ->
                        ids.forEach(
                                (id, receipt) -> {
                                    if (!leases.live
                                            .getOrDefault(token, Map.of())
                                            .containsKey(id)) {
                                        stale.add(receipt);
                                    }
                                }));
        return leases;
    }

    /**
     * Groups receipts by lease token ({@code token → id → receipt}); receipts this store did not
     * issue are added to {@code stale}.
     */
    private static Map<String, Map<String, String>> byToken(
            List<String> receipts, Set<String> stale) {
        Map<String, Map<String, String>> byToken = new HashMap<>();
        for (String receipt : receipts) {
            Optional<Receipt> r = Receipt.parse(receipt);
            if (r.isEmpty()) {
                stale.add(receipt);
            } else {
                byToken.computeIfAbsent(r.get().token(), t -> new HashMap<>())
                        .put(r.get().messageId(), receipt);
            }
        }
        return byToken;
    }

    /** The stale receipts in the order they were given. */
    private static Set<String> inOrder(List<String> receipts, Set<String> stale) {
        Set<String> ordered = new LinkedHashSet<>();
        for (String receipt : receipts) {
            if (stale.contains(receipt)) {
                ordered.add(receipt);
            }
        }
        return ordered;
    }

    /** Dead-letters one leased document; also the claim's quarantine for invalid documents. */
    boolean deadLetterLeased(
            BsonValue id, BsonString owner, BsonString token, String reason, Instant at) {
        BsonDocument lease = new BsonDocument(ID, id).append(RECEIPT, token).append(OWNER, owner);
        Map<BsonValue, String> keyed = Map.of();
        if (!keys.deadLettersBlock()) {
            BsonDocument d = collection.find(lease).projection(fields(KEY)).first();
            if (d == null) {
                return false;
            }
            String key = Documents.keyOf(d);
            if (key != null) {
                keyed = Map.of(id, key);
            }
        }
        BsonDocument update =
                new BsonDocument(
                                "$set",
                                new BsonDocument(DEAD_AT, new BsonInt64(Nanos.of(at)))
                                        .append(DEAD_REASON, new BsonString(reason)))
                        .append(
                                "$unset",
                                new BsonDocument(AVAILABLE_AT, new BsonString(""))
                                        .append(RECEIPT, new BsonString("")));
        return keys.removing(
                "dead-letter",
                keyed,
                () -> collection.updateOne(lease, update).getMatchedCount() == 1);
    }

    private static BsonDocument unsetLease() {
        return new BsonDocument(OWNER, new BsonString("")).append(RECEIPT, new BsonString(""));
    }

    /** The filter of one lease, or empty when the receipt is not one this store issued. */
    private static Optional<BsonDocument> leasedBy(String owner, String receipt) {
        return Receipt.parse(receipt)
                .map(
                        r ->
                                new BsonDocument(ID, new BsonString(r.messageId()))
                                        .append(RECEIPT, new BsonString(r.token()))
                                        .append(OWNER, new BsonString(owner)));
    }

    /**
     * The filter of several leases of one owner: {@code {owner, $or: [{receipt: token, _id: {$in:
     * ids}}, ...]}}.
     */
    private static BsonDocument leasedBy(
            BsonString owner, Map<String, Map<String, String>> idsByToken) {
        BsonArray branches = new BsonArray();
        idsByToken.forEach(
                (token, ids) ->
                        branches.add(
                                new BsonDocument(RECEIPT, new BsonString(token))
                                        .append(ID, in(ids.keySet()))));
        BsonDocument filter = new BsonDocument(OWNER, owner);
        if (branches.size() == 1) {
            return filter.append(RECEIPT, branches.get(0).asDocument().get(RECEIPT))
                    .append(ID, branches.get(0).asDocument().get(ID));
        }
        return filter.append("$or", branches);
    }

    private static BsonDocument in(Collection<String> values) {
        BsonArray array = new BsonArray(values.size());
        for (String v : values) {
            array.add(new BsonString(v));
        }
        return new BsonDocument("$in", array);
    }
}
