package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.ATTEMPTS;
import static io.outbox4j.store.mongo.Documents.AVAILABLE_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_REASON;
import static io.outbox4j.store.mongo.Documents.ID;
import static io.outbox4j.store.mongo.Documents.LAST_ERROR;
import static io.outbox4j.store.mongo.Documents.OWNER;
import static io.outbox4j.store.mongo.Documents.RECEIPT;
import static io.outbox4j.store.mongo.Documents.SEQ;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexModel;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.InsertManyOptions;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * An outbox store on one MongoDB collection, for the MongoDB Java sync driver.
 *
 * <pre>{@code
 * MongoOutboxStore store = MongoOutboxStore.builder()
 *         .client(mongoClient).database("shop")
 *         .collection("outbox_message")        // the default
 *         .build();
 * store.createIndexes();                       // once, at startup
 *
 * try (ClientSession session = mongoClient.startSession()) {
 *     session.withTransaction(() -> {
 *         orders.insertOne(session, order);
 *         store.enqueue(session, message);     // commits or aborts with the order
 *         return null;
 *     });
 * }
 * }</pre>
 *
 * <p><b>Write side.</b> {@link #enqueue} and {@link #enqueueAll} insert through the caller's {@link
 * ClientSession}, which must have an active transaction: the event then commits or aborts with the
 * business documents. A batch is one {@code insertMany}. A duplicate id is reported as a {@link
 * DuplicateMessageException}; MongoDB aborts the transaction on any write error, so the caller
 * starts it again.
 *
 * <p><b>Dispatch side.</b> No server-side cursor is held open. A claim finds the ids of the oldest
 * available messages, then leases them with one {@code updateMany} whose filter re-checks
 * availability and which stamps a fresh lease token; MongoDB updates each document atomically and
 * only while it still matches, so two claimers can never both lease a document. The tried documents
 * are read back and kept if they carry the token. Complete is one {@code deleteMany}; release and
 * dead-letter are compare-and-set updates on id, owner and token. These writes use write concern
 * {@code majority} unless configured otherwise, and read from the primary.
 *
 * <p>Instances are thread-safe; share one per collection.
 */
public final class MongoOutboxStore implements OutboxStore, Outbox<ClientSession> {
    /** The collection used when none is configured. */
    public static final String DEFAULT_COLLECTION = "outbox_message";

    /** The name of the index serving claims. */
    public static final String CLAIM_INDEX = "outbox_claim";

    /**
     * How many candidate queries one claim runs at most. A claim queries again only after other
     * claimers leased every candidate it tried, so each extra query follows progress made by
     * someone else; the bound keeps one claim short under any contention (it then returns what it
     * has, possibly nothing, and the relay claims again).
     */
    private static final int MAX_CANDIDATE_QUERIES = 16;

    private final MongoCollection<BsonDocument> collection;
    private final MessageLimits limits;
    private final Clock clock;

    private MongoOutboxStore(Builder b, MongoDatabase database) {
        this.collection =
                database.getCollection(b.collection, BsonDocument.class)
                        .withCodecRegistry(MongoClientSettings.getDefaultCodecRegistry())
                        .withWriteConcern(b.writeConcern)
                        .withReadPreference(ReadPreference.primary())
                        .withReadConcern(ReadConcern.LOCAL);
        this.limits = b.limits;
        this.clock = b.clock;
    }

    /**
     * Starts configuring a store.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Creates the claim index if it is missing: {@value #CLAIM_INDEX} on {@code {availableAt: 1,
     * seq: 1}}, partial on documents that can still be claimed (dead-lettered ones leave it, so the
     * claim path stays as small as the backlog). Complete, release and dead-letter address
     * documents by {@code _id} (a receipt carries the id), so they need no index of their own.
     * Creating the index also creates the collection, which MongoDB before 4.4 cannot do inside a
     * transaction: call this at startup. It is idempotent.
     *
     * @throws com.mongodb.MongoException if the server refuses, for example because an index of the
     *     same name exists with other options
     */
    public void createIndexes() {
        collection.createIndexes(
                List.of(
                        new IndexModel(
                                new BsonDocument(AVAILABLE_AT, new BsonInt32(1))
                                        .append(SEQ, new BsonInt32(1)),
                                new IndexOptions()
                                        .name(CLAIM_INDEX)
                                        .partialFilterExpression(
                                                new BsonDocument(
                                                        AVAILABLE_AT,
                                                        new BsonDocument(
                                                                "$exists", BsonBoolean.TRUE))))));
    }

    /**
     * Inserts one message in the caller's transaction.
     *
     * @param transaction the caller's session, with an active transaction
     * @param message the message
     * @throws DuplicateMessageException if a message with the same id is already in the outbox
     * @throws IllegalArgumentException if the session has no active transaction or the message is
     *     over the store's limits
     */
    @Override
    public void enqueue(ClientSession transaction, Message message) {
        enqueueAll(transaction, List.of(Validation.notNull(message, "message")));
    }

    /**
     * Inserts messages in the caller's transaction with one {@code insertMany}. An empty list does
     * nothing.
     *
     * @param transaction the caller's session, with an active transaction
     * @param messages the messages, in order
     * @throws DuplicateMessageException if an id is already in the outbox or appears twice in the
     *     list
     * @throws IllegalArgumentException if the session has no active transaction or a message is
     *     over the store's limits
     */
    @Override
    public void enqueueAll(ClientSession transaction, List<Message> messages) {
        Validation.notNull(transaction, "transaction");
        if (!transaction.hasActiveTransaction()) {
            throw new IllegalArgumentException(
                    "transaction must be a ClientSession with an active transaction "
                            + "(session.startTransaction() or session.withTransaction(...)); outside a transaction the "
                            + "message would not commit or roll back with the business change");
        }
        insert(transaction, messages);
    }

    /**
     * Inserts the messages through the session, or without one when {@code session} is {@code
     * null}. The session-less form exists for tests against servers without sessions; the public
     * write side always has one.
     */
    void insert(ClientSession session, List<Message> messages) {
        Validation.notNull(messages, "messages");
        if (messages.isEmpty()) {
            return;
        }
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < messages.size(); i++) {
            Message m = Validation.notNull(messages.get(i), "messages[" + i + "]");
            Validation.message(m, limits);
            if (!ids.add(m.id())) {
                throw new DuplicateMessageException(m.id(), null);
            }
        }
        long enqueuedAt = Micros.floor(clock.instant());
        long seq = Sequence.reserve(messages.size());
        List<BsonDocument> docs = new ArrayList<>(messages.size());
        for (Message m : messages) {
            docs.add(Documents.encode(m, seq++, enqueuedAt));
        }
        try {
            if (docs.size() == 1) {
                if (session == null) {
                    collection.insertOne(docs.get(0));
                } else {
                    collection.insertOne(session, docs.get(0));
                }
            } else {
                InsertManyOptions ordered = new InsertManyOptions().ordered(true);
                if (session == null) {
                    collection.insertMany(docs, ordered);
                } else {
                    collection.insertMany(session, docs, ordered);
                }
            }
        } catch (MongoWriteException e) {
            if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                throw new DuplicateMessageException(messages.get(0).id(), e);
            }
            throw e;
        } catch (MongoBulkWriteException e) {
            for (BulkWriteError error : e.getWriteErrors()) {
                if (ErrorCategory.fromErrorCode(error.getCode()) == ErrorCategory.DUPLICATE_KEY) {
                    throw new DuplicateMessageException(messages.get(error.getIndex()).id(), e);
                }
            }
            throw e;
        }
    }

    /**
     * Leases up to {@code request.limit()} available messages, oldest available first (then in
     * enqueue order).
     *
     * <p>A short query finds the ids of the oldest available messages (at most twice the number
     * still wanted), without holding a cursor open. One {@code updateMany} then leases the first of
     * them: its filter names the ids <em>and</em> repeats the availability condition, and it stamps
     * the claim's fresh lease token. MongoDB applies an update to each document atomically and only
     * if the document still matches the filter, so a document another claimer leased in the
     * meantime (its {@code availableAt} moved to a future lease end) is skipped, never shared. When
     * some were lost, the next candidates are tried, then the query runs again, a bounded number of
     * times; under heavy contention a claim may therefore return fewer than {@code limit} messages
     * while the others lease the rest. The tried documents are then read back by id, and those
     * carrying this claim's token are the ones it leased.
     *
     * @param request who claims, at what time, for how long, and how many at most
     * @return the leased messages in claim order
     */
    @Override
    public List<Delivery> claim(ClaimRequest request) {
        long now = Micros.floor(request.now());
        BsonString token = new BsonString(Receipt.newToken());
        BsonDocument lease =
                new BsonDocument()
                        .append(
                                "$set",
                                new BsonDocument(
                                                AVAILABLE_AT,
                                                new BsonInt64(Micros.ceil(request.leaseUntil())))
                                        .append(OWNER, new BsonString(request.owner()))
                                        .append(RECEIPT, token))
                        .append("$inc", new BsonDocument(ATTEMPTS, new BsonInt32(1)));
        Map<BsonValue, Integer> rank = new HashMap<>();
        long won = 0;
        for (int query = 0; query < MAX_CANDIDATE_QUERIES && won < request.limit(); query++) {
            int fetch = 2 * (int) (request.limit() - won);
            List<BsonValue> candidates = new ArrayList<>(fetch);
            for (BsonDocument d :
                    collection
                            .find(available(now))
                            .projection(new BsonDocument(ID, new BsonInt32(1)))
                            .sort(
                                    new BsonDocument(AVAILABLE_AT, new BsonInt32(1))
                                            .append(SEQ, new BsonInt32(1)))
                            .limit(fetch)
                            .batchSize(fetch)) {
                candidates.add(d.get(ID));
            }
            int next = 0;
            while (won < request.limit() && next < candidates.size()) {
                int take = (int) Math.min(request.limit() - won, candidates.size() - next);
                List<BsonValue> ids = candidates.subList(next, next + take);
                for (BsonValue id : ids) {
                    rank.putIfAbsent(id, rank.size());
                }
                won +=
                        collection
                                .updateMany(
                                        available(now)
                                                .append(
                                                        ID,
                                                        new BsonDocument(
                                                                "$in", new BsonArray(ids))),
                                        lease)
                                .getMatchedCount();
                next += take;
            }
            if (candidates.size() < fetch) {
                break; // every message available at `now` has been tried
            }
        }
        return won == 0 ? List.of() : readBack(request.owner(), token, rank);
    }

    /**
     * Reads the documents this claim leased, in the order they were found: the candidates it tried,
     * by id, keeping those that carry its token (the others went to another claimer).
     */
    private List<Delivery> readBack(String owner, BsonString token, Map<BsonValue, Integer> rank) {
        List<BsonDocument> leased = new ArrayList<>(rank.size());
        for (BsonDocument d :
                collection.find(
                        new BsonDocument(
                                ID,
                                new BsonDocument(
                                        "$in", new BsonArray(new ArrayList<>(rank.keySet())))))) {
            if (token.equals(d.get(RECEIPT)) && new BsonString(owner).equals(d.get(OWNER))) {
                leased.add(d);
            }
        }
        leased.sort(Comparator.comparing(d -> rank.get(d.get(ID))));
        List<Delivery> deliveries = new ArrayList<>(leased.size());
        for (BsonDocument d : leased) {
            BsonValue id = d.get(ID);
            Message message;
            try {
                message = Documents.decode(d);
            } catch (RuntimeException e) {
                // Not a message this store wrote: park it rather than fail every claim that meets
                // it.
                collection.updateOne(
                        new BsonDocument(ID, id).append(RECEIPT, token),
                        deadLetterUpdate(
                                "stored document is not a valid outbox message: " + e.getMessage(),
                                clock.instant()));
                continue;
            }
            deliveries.add(
                    new Delivery(
                            message,
                            new Receipt(token.getValue(), message.id()).toString(),
                            Documents.attempts(d)));
        }
        return deliveries;
    }

    /**
     * Removes the completed messages with one {@code deleteMany} on owner, lease tokens and ids.
     *
     * <p>The leases the owner still holds are looked up first (by id), so the stale receipts
     * (expired and claimed again, already finished, dead-lettered, foreign or made up) are reported
     * exactly. Should a lease expire and be claimed again between that look-up and the delete, its
     * token no longer matches, nothing is deleted for it, and it is reported stale too — unless its
     * new holder completed it within that window as well: the message is gone either way, and it is
     * reported completed.
     *
     * @param completion the owner and the receipts of the published leases
     * @return the stale receipts, for which nothing changed
     */
    @Override
    public Set<String> complete(Completion completion) {
        Set<String> stale = new HashSet<>();
        Map<String, Map<String, String>> byToken = new HashMap<>(); // token -> id -> receipt
        for (String receipt : completion.receipts()) {
            Optional<Receipt> r = Receipt.parse(receipt);
            if (r.isEmpty()) {
                stale.add(receipt);
            } else {
                byToken.computeIfAbsent(r.get().token(), t -> new HashMap<>())
                        .put(r.get().messageId(), receipt);
            }
        }
        if (byToken.isEmpty()) {
            return inOrder(completion, stale);
        }
        BsonString owner = new BsonString(completion.owner());
        Set<String> allIds = new HashSet<>();
        byToken.values().forEach(ids -> allIds.addAll(ids.keySet()));
        Map<String, Map<String, String>> live = new HashMap<>();
        int liveCount = 0;
        for (BsonDocument d :
                collection
                        .find(new BsonDocument(ID, in(allIds)))
                        .projection(
                                new BsonDocument(ID, new BsonInt32(1))
                                        .append(RECEIPT, new BsonInt32(1))
                                        .append(OWNER, new BsonInt32(1)))) {
            BsonValue token = d.get(RECEIPT);
            if (token == null || !token.isString() || !owner.equals(d.get(OWNER))) {
                continue;
            }
            String id = d.getString(ID).getValue();
            String receipt = byToken.getOrDefault(token.asString().getValue(), Map.of()).get(id);
            if (receipt != null) {
                live.computeIfAbsent(token.asString().getValue(), t -> new HashMap<>())
                        .put(id, receipt);
                liveCount++;
            }
        }
        byToken.forEach(
                (token, ids) ->
                        ids.forEach(
                                (id, receipt) -> {
                                    if (!live.getOrDefault(token, Map.of()).containsKey(id)) {
                                        stale.add(receipt);
                                    }
                                }));
        if (liveCount == 0) {
            return inOrder(completion, stale);
        }
        long deleted = collection.deleteMany(leasedBy(owner, live)).getDeletedCount();
        if (deleted < liveCount) {
            // Some leases changed hands between the look-up and the delete: those documents still
            // exist.
            Map<String, String> receiptById = new HashMap<>();
            live.values().forEach(receiptById::putAll);
            for (BsonDocument d :
                    collection
                            .find(new BsonDocument(ID, in(receiptById.keySet())))
                            .projection(new BsonDocument(ID, new BsonInt32(1)))) {
                stale.add(receiptById.get(d.getString(ID).getValue()));
            }
        }
        return inOrder(completion, stale);
    }

    /** The stale receipts in the order the completion listed them. */
    private static Set<String> inOrder(Completion completion, Set<String> stale) {
        Set<String> ordered = new LinkedHashSet<>();
        for (String receipt : completion.receipts()) {
            if (stale.contains(receipt)) {
                ordered.add(receipt);
            }
        }
        return ordered;
    }

    /**
     * Clears the lease and makes the message available again at {@code release.availableAt()},
     * keeping the error.
     *
     * @param release the lease and when to retry
     * @return {@code true} if released, {@code false} if the receipt was stale
     */
    @Override
    public boolean release(Release release) {
        Optional<BsonDocument> lease = leasedBy(release.owner(), release.receipt());
        if (lease.isEmpty()) {
            return false;
        }
        BsonDocument update =
                new BsonDocument()
                        .append(
                                "$set",
                                new BsonDocument(
                                                AVAILABLE_AT,
                                                new BsonInt64(Micros.ceil(release.availableAt())))
                                        .append(LAST_ERROR, new BsonString(release.error())))
                        .append(
                                "$unset",
                                new BsonDocument(OWNER, new BsonString(""))
                                        .append(RECEIPT, new BsonString("")));
        return collection.updateOne(lease.get(), update).getMatchedCount() == 1;
    }

    /**
     * Parks the message for good: it leaves the claim path ({@code availableAt} is removed) and
     * keeps the reason, the time and the owner that gave it up.
     *
     * @param deadLetter the lease and why it is given up
     * @return {@code true} if dead-lettered, {@code false} if the receipt was stale
     */
    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        Optional<BsonDocument> lease = leasedBy(deadLetter.owner(), deadLetter.receipt());
        return lease.isPresent()
                && collection
                                .updateOne(
                                        lease.get(),
                                        deadLetterUpdate(deadLetter.reason(), deadLetter.at()))
                                .getMatchedCount()
                        == 1;
    }

    private static BsonDocument deadLetterUpdate(String reason, Instant at) {
        return new BsonDocument()
                .append(
                        "$set",
                        new BsonDocument(DEAD_AT, new BsonInt64(Micros.floor(at)))
                                .append(DEAD_REASON, new BsonString(reason)))
                .append(
                        "$unset",
                        new BsonDocument(AVAILABLE_AT, new BsonString(""))
                                .append(RECEIPT, new BsonString("")));
    }

    /** The collection, for tests in this package. */
    MongoCollection<BsonDocument> collection() {
        return collection;
    }

    @Override
    public String toString() {
        return "MongoOutboxStore["
                + collection.getNamespace()
                + ", writeConcern="
                + collection.getWriteConcern()
                + "]";
    }

    /**
     * The claim predicate: {@code availableAt} exists and is due. Naming {@code $exists} lets the
     * planner match the partial index's filter literally.
     */
    private static BsonDocument available(long now) {
        return new BsonDocument(
                AVAILABLE_AT,
                new BsonDocument("$exists", BsonBoolean.TRUE).append("$lte", new BsonInt64(now)));
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

    /**
     * Configures a {@link MongoOutboxStore}. Give either {@link #client(MongoClient)} and {@link
     * #database(String)}, or {@link #database(MongoDatabase)}.
     */
    public static final class Builder {
        private MongoClient client;
        private String databaseName;
        private MongoDatabase database;
        private String collection = DEFAULT_COLLECTION;
        private WriteConcern writeConcern = WriteConcern.MAJORITY;
        private MessageLimits limits = MessageLimits.DEFAULTS;
        private Clock clock = Clock.systemUTC();

        private Builder() {}

        /**
         * Sets the client; the database is then named with {@link #database(String)}.
         *
         * @param client the client, owned and closed by the caller
         * @return this builder
         * @throws IllegalArgumentException if the client is null
         */
        public Builder client(MongoClient client) {
            this.client = Validation.notNull(client, "client");
            return this;
        }

        /**
         * Names the database of the {@link #client(MongoClient) client}.
         *
         * @param name the database name
         * @return this builder
         * @throws IllegalArgumentException if the name is not a valid MongoDB database name
         */
        public Builder database(String name) {
            this.databaseName = Validation.databaseName(name);
            return this;
        }

        /**
         * Sets the database directly, instead of a client and a database name. Its codec registry,
         * read preference and read concern are not used: the store reads its own documents from the
         * primary.
         *
         * @param database the database
         * @return this builder
         * @throws IllegalArgumentException if the database is null
         */
        public Builder database(MongoDatabase database) {
            this.database = Validation.notNull(database, "database");
            return this;
        }

        /**
         * Names the collection (default {@value MongoOutboxStore#DEFAULT_COLLECTION}).
         *
         * @param name a collection name: not empty, at most 120 characters, without {@code $} or
         *     NUL, not starting with {@code system.}
         * @return this builder
         * @throws IllegalArgumentException if the name is not acceptable, saying why
         */
        public Builder collection(String name) {
            this.collection = Validation.collectionName(name);
            return this;
        }

        /**
         * Sets the write concern of claim, complete, release and dead-letter (default {@code
         * majority}, so that a lease or a completion survives the loss of the primary). Enqueue
         * inside a transaction always uses the transaction's write concern.
         *
         * @param writeConcern an acknowledged write concern
         * @return this builder
         * @throws IllegalArgumentException if it is null or unacknowledged: every write is a
         *     compare-and-set whose result must be known
         */
        public Builder writeConcern(WriteConcern writeConcern) {
            Validation.notNull(writeConcern, "writeConcern");
            if (!writeConcern.isAcknowledged()) {
                throw new IllegalArgumentException(
                        "writeConcern must be acknowledged (compare-and-set writes need "
                                + "their result), but was "
                                + writeConcern);
            }
            this.writeConcern = writeConcern;
            return this;
        }

        /**
         * Sets the limits every enqueued message is checked against (default {@link
         * MessageLimits#DEFAULTS}).
         *
         * @param limits the limits; they must keep a message within MongoDB's 16 MiB document size
         * @return this builder
         * @throws IllegalArgumentException if they are null or allow documents over 16 MiB
         */
        public Builder limits(MessageLimits limits) {
            this.limits = Validation.limits(limits);
            return this;
        }

        /**
         * Sets the clock that stamps enqueue time: a message without {@code notBefore} is available
         * from then. Lease decisions never use it; they use {@link ClaimRequest#now()}.
         *
         * @param clock the clock (default: the system UTC clock)
         * @return this builder
         * @throws IllegalArgumentException if the clock is null
         */
        public Builder clock(Clock clock) {
            this.clock = Validation.notNull(clock, "clock");
            return this;
        }

        /**
         * Builds the store. Nothing is sent to the server; call {@link
         * MongoOutboxStore#createIndexes()} once.
         *
         * @return the store
         * @throws IllegalStateException if neither a database nor a client and a database name were
         *     given, or both
         */
        public MongoOutboxStore build() {
            if (database != null && (client != null || databaseName != null)) {
                throw new IllegalStateException(
                        "give either database(MongoDatabase) or client(MongoClient) with database(String), not both");
            }
            if (database != null) {
                return new MongoOutboxStore(this, database);
            }
            if (client == null || databaseName == null) {
                throw new IllegalStateException(
                        "a database is required: call database(MongoDatabase), or "
                                + "client(MongoClient) and database(String)"
                                + (client == null ? "" : " (database name missing)"));
            }
            return new MongoOutboxStore(this, client.getDatabase(databaseName));
        }
    }
}
