package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.ATTEMPTS;
import static io.outbox4j.store.mongo.Documents.AVAILABLE_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_REASON;
import static io.outbox4j.store.mongo.Documents.ID;
import static io.outbox4j.store.mongo.Documents.KEY;
import static io.outbox4j.store.mongo.Documents.LAST_ERROR;
import static io.outbox4j.store.mongo.Documents.OWNER;
import static io.outbox4j.store.mongo.Documents.PARKED;
import static io.outbox4j.store.mongo.Documents.RECEIPT;
import static io.outbox4j.store.mongo.Documents.SEQ;
import static io.outbox4j.store.mongo.Documents.TOPIC;
import static io.outbox4j.store.mongo.Documents.ascending;
import static io.outbox4j.store.mongo.Documents.fields;
import static io.outbox4j.store.mongo.Documents.idIn;

import com.mongodb.client.MongoCollection;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The operator's side of the MongoDB store ({@link io.outbox4j.api.OutboxAdmin}): counts by
 * aggregation, dead letters page by page through the {@code outbox_dead} index, replay as one
 * {@code updateMany}, discard through {@link KeyOrder#removing} so their keys are unparked first.
 */
final class Admin {
    private static final String CURSOR_VERSION = "m1";

    private final MongoCollection<BsonDocument> collection;
    private final KeyOrder keys;

    Admin(MongoCollection<BsonDocument> collection, KeyOrder keys) {
        this.collection = collection;
        this.keys = keys;
    }

    /** Counters of one topic while the statistics are computed. */
    private static final class Counts {
        long ready;
        long delayed;
        long leased;
        long dead;
        long oldestReady = Long.MAX_VALUE;

        TopicStatistics toStatistics(Instant now) {
            Duration age =
                    oldestReady == Long.MAX_VALUE
                            ? Duration.ZERO
                            : Duration.between(Nanos.toInstant(oldestReady), now);
            return new TopicStatistics(
                    ready, delayed, leased, dead, age.isNegative() ? Duration.ZERO : age);
        }
    }

    OutboxStatistics statistics(Instant now) {
        long at = Nanos.of(now);
        Tally tally = new Tally();
        BsonDocument exists = new BsonDocument("$exists", BsonBoolean.TRUE);
        BsonDocument absent = new BsonDocument("$exists", BsonBoolean.FALSE);
        BsonDocument notDue = new BsonDocument("$gt", new BsonInt64(at));
        tally.add(
                new BsonDocument(AVAILABLE_AT, new BsonDocument("$lte", new BsonInt64(at))),
                true,
                (c, g) -> {
                    c.ready += count(g);
                    BsonValue oldest = g.get("oldest");
                    if (oldest != null && oldest.isNumber()) {
                        c.oldestReady = Math.min(c.oldestReady, oldest.asNumber().longValue());
                    }
                });
        tally.add(
                new BsonDocument(AVAILABLE_AT, notDue).append(RECEIPT, exists),
                false,
                (c, g) -> c.leased += count(g));
        tally.add(
                new BsonDocument(AVAILABLE_AT, notDue).append(RECEIPT, absent),
                false,
                (c, g) -> c.delayed += count(g));
        tally.add(new BsonDocument(DEAD_AT, exists), false, (c, g) -> c.dead += count(g));
        long blockedKeys = 0;
        if (keys.deadLettersBlock()) {
            for (BsonDocument d :
                    collection.aggregate(
                            List.of(
                                    new BsonDocument(
                                            "$match",
                                            new BsonDocument(DEAD_AT, exists).append(KEY, exists)),
                                    new BsonDocument(
                                            "$group",
                                            new BsonDocument(ID, new BsonString("$" + KEY))),
                                    new BsonDocument("$count", new BsonString("n"))))) {
                blockedKeys = count(d);
            }
        }
        Map<String, TopicStatistics> topics = new TreeMap<>();
        tally.byTopic.forEach((t, c) -> topics.put(t, c.toStatistics(now)));
        return new OutboxStatistics(now, tally.total.toStatistics(now), topics, blockedKeys);
    }

    private static long count(BsonDocument group) {
        BsonValue n = group.get("n");
        return n != null && n.isNumber() ? n.asNumber().longValue() : 0;
    }

    /** The counts of a statistics call, per topic and in total. */
    private final class Tally {
        final Map<String, Counts> byTopic = new TreeMap<>();
        final Counts total = new Counts();

        /**
         * Groups the documents matching {@code match} by topic (with the earliest {@code
         * availableAt} of each group if {@code oldest}) and adds each group's figures.
         */
        void add(BsonDocument match, boolean oldest, BiConsumer<Counts, BsonDocument> add) {
            BsonDocument group =
                    new BsonDocument(ID, new BsonString("$" + TOPIC))
                            .append("n", new BsonDocument("$sum", new BsonInt32(1)));
            if (oldest) {
                group.append(
                        "oldest", new BsonDocument("$min", new BsonString("$" + AVAILABLE_AT)));
            }
            for (BsonDocument g :
                    collection.aggregate(
                            List.of(
                                    new BsonDocument("$match", match),
                                    new BsonDocument("$group", group)))) {
                add.accept(total, g);
                BsonValue topic = g.get(ID);
                if (topic != null && topic.isString()) {
                    add.accept(
                            byTopic.computeIfAbsent(topic.asString().getValue(), t -> new Counts()),
                            g);
                }
            }
        }
    }

    DeadLetterPage deadLetters(DeadLetterQuery query) {
        BsonDocument filter = deadFilter(query);
        if (query.after().isPresent()) {
            long[] after = decodeCursor(query.after().get());
            BsonDocument laterTime =
                    new BsonDocument(DEAD_AT, new BsonDocument("$gt", new BsonInt64(after[0])));
            BsonDocument sameTimeLaterSeq =
                    new BsonDocument(DEAD_AT, new BsonInt64(after[0]))
                            .append(SEQ, new BsonDocument("$gt", new BsonInt64(after[1])));
            BsonDocument afterCursor =
                    new BsonDocument("$or", new BsonArray(List.of(laterTime, sameTimeLaterSeq)));
            filter = new BsonDocument("$and", new BsonArray(List.of(filter, afterCursor)));
        }
        List<BsonDocument> docs =
                collection
                        .find(filter)
                        .sort(ascending(DEAD_AT, SEQ))
                        .limit(query.limit() + 1)
                        .batchSize(query.limit() + 1)
                        .into(new ArrayList<>());
        List<DeadMessage> items = new ArrayList<>();
        for (int i = 0; i < Math.min(query.limit(), docs.size()); i++) {
            BsonDocument d = docs.get(i);
            try {
                items.add(
                        new DeadMessage(
                                Documents.decode(d),
                                d.getString(DEAD_REASON).getValue(),
                                Documents.attemptsOf(d),
                                Documents.enqueuedAt(d),
                                Nanos.toInstant(d.getInt64(DEAD_AT).getValue())));
            } catch (RuntimeException e) {
                // A document that is not a valid message (dead-lettered by a claim for that
                // reason) cannot be shown as one; lastError(id) and discard(ids) still reach it.
            }
        }
        Optional<String> next =
                docs.size() > query.limit()
                        ? Optional.of(cursor(docs.get(query.limit() - 1)))
                        : Optional.empty();
        return new DeadLetterPage(items, next);
    }

    /** The dead letters a query's filter selects: dead, its topic, its range of dead times. */
    static BsonDocument deadFilter(DeadLetterQuery query) {
        BsonDocument deadAt = new BsonDocument("$exists", BsonBoolean.TRUE);
        query.deadFrom().ifPresent(from -> deadAt.append("$gte", new BsonInt64(Nanos.of(from))));
        query.deadBefore()
                .ifPresent(before -> deadAt.append("$lt", new BsonInt64(Nanos.of(before))));
        BsonDocument filter = new BsonDocument(DEAD_AT, deadAt);
        query.topic().ifPresent(topic -> filter.append(TOPIC, new BsonString(topic)));
        return filter;
    }

    private static String cursor(BsonDocument last) {
        String text =
                CURSOR_VERSION
                        + ":"
                        + last.getInt64(DEAD_AT).getValue()
                        + ":"
                        + Documents.seqOf(last);
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    private static long[] decodeCursor(String cursor) {
        try {
            String[] parts =
                    new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8)
                            .split(":", -1);
            if (parts.length != 3 || !parts[0].equals(CURSOR_VERSION)) {
                throw new IllegalArgumentException("unknown cursor format");
            }
            return new long[] {Long.parseLong(parts[1]), Long.parseLong(parts[2])};
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "cursor '" + cursor + "' was not issued by this store", e);
        }
    }

    int replay(List<String> ids, Instant now) {
        BsonArray distinct = ids(ids);
        Validation.notNull(now, "now");
        return (int)
                collection
                        .updateMany(
                                idIn(distinct)
                                        .append(
                                                DEAD_AT,
                                                new BsonDocument("$exists", BsonBoolean.TRUE)),
                                replayed(now))
                        .getModifiedCount();
    }

    int replayAll(DeadLetterQuery filter, Instant now) {
        Validation.notNull(filter, "filter");
        Validation.notNull(now, "now");
        long n = collection.updateMany(deadFilter(filter), replayed(now)).getModifiedCount();
        return (int) Math.min(Integer.MAX_VALUE, n);
    }

    /**
     * Due at {@code now} with no tries counted; the message keeps its place in its key (its
     * followers stay parked until it is finished).
     */
    private static BsonDocument replayed(Instant now) {
        return new BsonDocument(
                        "$set",
                        new BsonDocument(AVAILABLE_AT, new BsonInt64(Nanos.of(now)))
                                .append(ATTEMPTS, new BsonInt32(0))
                                .append(PARKED, BsonBoolean.FALSE))
                .append(
                        "$unset",
                        new BsonDocument(DEAD_AT, new BsonString(""))
                                .append(DEAD_REASON, new BsonString(""))
                                .append(OWNER, new BsonString(""))
                                .append(RECEIPT, new BsonString("")));
    }

    int discard(List<String> ids) {
        return (int) discardIds(ids(ids));
    }

    int discardAll(DeadLetterQuery filter) {
        Validation.notNull(filter, "filter");
        BsonDocument selected = deadFilter(filter);
        long discarded = 0;
        while (true) {
            BsonArray chunk = new BsonArray();
            for (BsonDocument d :
                    collection
                            .find(selected)
                            .projection(fields(ID))
                            .limit(DeadLetterQuery.MAX_LIMIT)
                            .batchSize(DeadLetterQuery.MAX_LIMIT)) {
                chunk.add(Documents.idOf(d));
            }
            if (chunk.isEmpty()) {
                return (int) Math.min(Integer.MAX_VALUE, discarded);
            }
            discarded += discardIds(chunk);
        }
    }

    /**
     * Deletes the dead letters among the ids. When dead letters block their key, the keys of those
     * that hold parked messages back are unparked first, under their buckets' locks.
     */
    private long discardIds(BsonArray ids) {
        BsonDocument dead =
                idIn(ids).append(DEAD_AT, new BsonDocument("$exists", BsonBoolean.TRUE));
        Map<BsonValue, String> keyed = new HashMap<>();
        if (keys.deadLettersBlock()) {
            for (BsonDocument d : collection.find(dead).projection(fields(KEY))) {
                String key = Documents.keyOf(d);
                if (key != null) {
                    keyed.put(Documents.idOf(d), key);
                }
            }
        }
        return keys.removing("discard", keyed, () -> collection.deleteMany(dead).getDeletedCount());
    }

    Optional<String> lastError(String id) {
        Validation.notNull(id, "id");
        BsonDocument d =
                collection
                        .find(new BsonDocument(ID, new BsonString(id)))
                        .projection(fields(DEAD_AT, DEAD_REASON, LAST_ERROR))
                        .first();
        if (d == null) {
            return Optional.empty();
        }
        BsonValue text = d.containsKey(DEAD_AT) ? d.get(DEAD_REASON) : d.get(LAST_ERROR);
        return text != null && text.isString()
                ? Optional.of(text.asString().getValue())
                : Optional.empty();
    }

    /** The ids of a replay or discard, each once, checked. */
    private static BsonArray ids(List<String> ids) {
        Validation.notNull(ids, "ids");
        if (ids.size() > DeadLetterQuery.MAX_LIMIT) {
            throw new IllegalArgumentException(
                    "ids must hold at most "
                            + DeadLetterQuery.MAX_LIMIT
                            + " ids, but held "
                            + ids.size());
        }
        for (int i = 0; i < ids.size(); i++) {
            Validation.notNull(ids.get(i), "ids[" + i + "]");
        }
        BsonArray distinct = new BsonArray();
        for (String id : new LinkedHashSet<>(ids)) {
            distinct.add(new BsonString(id));
        }
        return distinct;
    }
}
