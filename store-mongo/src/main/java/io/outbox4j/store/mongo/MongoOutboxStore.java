package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.AVAILABLE_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_AT;
import static io.outbox4j.store.mongo.Documents.KEY;
import static io.outbox4j.store.mongo.Documents.PARKED;
import static io.outbox4j.store.mongo.Documents.SEQ;
import static io.outbox4j.store.mongo.Documents.ascending;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
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
import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.jspecify.annotations.Nullable;

/**
 * An outbox store on one MongoDB collection, for the MongoDB Java sync driver. It is the write side
 * ({@link Outbox} over the caller's {@link ClientSession}), the dispatch side ({@link OutboxStore})
 * and the operator's side ({@link OutboxAdmin}).
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
 * starts it again. The store stamps each message with its enqueue time and an enqueue order ({@code
 * seq}).
 *
 * <p><b>Dispatch side, per-key order.</b> A message with a key is handed out only when every
 * earlier message of its key still in the outbox is handed out before it in the same claim, so two
 * claimers never hold two messages of one key and a key's messages go out in enqueue order, across
 * relays, retries and restarts (docs/per-key-order.md). A dead letter blocks its key until it is
 * replayed or discarded, unless the store is built with {@link Builder#deadLettersBlockTheirKey
 * deadLettersBlockTheirKey(false)}. A keyed message found waiting behind an earlier one is
 * <em>parked</em> (out of the claim index) until that one is completed or discarded; parking and
 * the removals that unpark are serialised per bucket by bucket locks (lock documents in {@code
 * <collection>.lock} with a short lease, see {@link #claim}), so claims and completions of
 * different buckets never wait for each other. Parked messages leave the claim index, so claims
 * stay as cheap as the number of messages they hand out however many keys are blocked. Complete,
 * release, dead-letter, extend and abandon are compare-and-set writes on owner and lease token.
 * Writes use write concern {@code majority} unless configured otherwise, and reads go to the
 * primary.
 *
 * <p><b>Several relays, as members.</b> The store is an {@link OutboxMembership}: relays that
 * {@link #renew} a membership share the {@value io.outbox4j.api.Buckets#COUNT} buckets of the key
 * space, and a claim {@linkplain ClaimRequest#member() as a member} takes keyed messages only of
 * its own buckets. Members are documents {@code {_id: member, leaseUntil: date}} in {@code
 * <collection>.members}; the assignment is one document {@code {_id: "owners", owners: [256
 * owners], version}} in {@code <collection>.buckets}, replaced by compare-and-set on its version.
 * Member leases are started and judged by the MongoDB server's clock: a renewal reads it with the
 * {@code hello} command ({@code localTime}; {@code isMaster} on servers without {@code hello}), a
 * claim compares the lease with {@code $$NOW} inside its query. The builder's {@link
 * Builder#clock(Clock) clock} is never used for membership. Keyed messages carry their bucket
 * ({@code bucket}, written at enqueue) so the claim selects them in its query.
 *
 * <p><b>Without multi-document transactions</b> (the dispatch side uses none, so it also runs on a
 * standalone server) each multi-step operation is ordered so that a crash between two writes loses
 * nothing and blocks no key for good: a claim marks and parks before it leases, a removal unparks
 * before it deletes.
 *
 * <p><b>Errors.</b> Failures of the driver or the server are thrown as {@link OutboxException} with
 * the driver's exception as the cause and its message repeated.
 *
 * <p>Instances are thread-safe; share one per collection.
 */
public final class MongoOutboxStore
        implements OutboxStore, OutboxAdmin, OutboxMembership, Outbox<ClientSession> {
    /** The collection used when none is configured. */
    public static final String DEFAULT_COLLECTION = "outbox_message";

    /** The name of the index serving claims. */
    public static final String CLAIM_INDEX = "outbox_claim";

    /** The name of the index serving per-key order when dead letters block their key. */
    public static final String KEY_INDEX = "outbox_key";

    /**
     * The name of the index serving per-key order when dead letters do not block their key (it
     * leaves them out).
     */
    public static final String LIVE_KEY_INDEX = "outbox_key_live";

    /** The name of the index serving the dead-letter listing. */
    public static final String DEAD_INDEX = "outbox_dead";

    /**
     * The name of the index on parked messages, serving unparking and the sweep for messages parked
     * behind nothing.
     */
    public static final String PARKED_INDEX = "outbox_parked";

    /** The suffix of the collection that holds the bucket locks: {@code <collection>.lock}. */
    public static final String LOCK_COLLECTION_SUFFIX = ".lock";

    /** The suffix of the collection that holds the members: {@code <collection>.members}. */
    public static final String MEMBERS_COLLECTION_SUFFIX = ".members";

    /**
     * The suffix of the collection that holds the bucket assignment (one document): {@code
     * <collection>.buckets}.
     */
    public static final String BUCKETS_COLLECTION_SUFFIX = ".buckets";

    private final MongoCollection<BsonDocument> collection;
    private final MessageLimits limits;
    private final Clock clock;
    private final KeyOrder keys;
    private final Claimer claimer;
    private final Leasing leasing;
    private final Admin admin;
    private final Members members;

    private MongoOutboxStore(Builder b, MongoDatabase database) {
        this.collection = open(database, b.collection, b.writeConcern);
        this.limits = b.limits;
        this.clock = b.clock;
        BucketLocks locks =
                new BucketLocks(
                        open(database, b.collection + LOCK_COLLECTION_SUFFIX, b.writeConcern),
                        b.lockLease,
                        b.lockWait);
        this.keys = new KeyOrder(collection, locks, b.deadLettersBlockTheirKey);
        this.members =
                new Members(
                        open(database, b.collection + MEMBERS_COLLECTION_SUFFIX, b.writeConcern),
                        open(database, b.collection + BUCKETS_COLLECTION_SUFFIX, b.writeConcern),
                        new ServerClock(
                                database.withCodecRegistry(
                                        MongoClientSettings.getDefaultCodecRegistry())));
        this.leasing = new Leasing(collection, keys);
        this.claimer = new Claimer(collection, keys, leasing::deadLetterLeased, clock, members);
        this.admin = new Admin(collection, keys);
    }

    private static MongoCollection<BsonDocument> open(
            MongoDatabase database, String name, WriteConcern writeConcern) {
        return database.getCollection(name, BsonDocument.class)
                .withCodecRegistry(MongoClientSettings.getDefaultCodecRegistry())
                .withWriteConcern(writeConcern)
                .withReadPreference(ReadPreference.primary())
                .withReadConcern(ReadConcern.LOCAL);
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
     * Creates the store's indexes if they are missing:
     *
     * <ul>
     *   <li>{@value #CLAIM_INDEX} on {@code {availableAt: 1, seq: 1}}, partial on messages that are
     *       neither dead nor parked: the claim reads it in order and stops after a page, so its
     *       cost follows the messages it hands out, not the backlog;
     *   <li>{@value #KEY_INDEX} on {@code {key: 1, seq: 1}}, partial on keyed messages (or {@value
     *       #LIVE_KEY_INDEX}, partial on keyed messages that are not dead, when dead letters do not
     *       block their key): each key of a claim's page is one range read on it, and so is
     *       unparking a key;
     *   <li>{@value #DEAD_INDEX} on {@code {deadAt: 1, seq: 1}}, partial on dead letters: the
     *       listing for operators;
     *   <li>{@value #PARKED_INDEX} on {@code {key: 1, seq: 1}}, partial on parked messages:
     *       unparking a key, and a member's sweep of its buckets for messages parked behind nothing
     *       (new in 0.2: call this method again when upgrading).
     * </ul>
     *
     * Complete, release, dead-letter, extend and abandon address documents by {@code _id} (a
     * receipt carries the id). Creating an index also creates the collection, which MongoDB before
     * 4.4 cannot do inside a transaction: call this at startup. It is idempotent.
     *
     * @throws OutboxException if the server refuses, for example because an index of the same name
     *     exists with other options
     */
    public void createIndexes() {
        call(
                "createIndexes",
                () -> {
                    BsonDocument exists = new BsonDocument("$exists", BsonBoolean.TRUE);
                    return collection.createIndexes(
                            List.of(
                                    new IndexModel(
                                            ascending(AVAILABLE_AT, SEQ),
                                            new IndexOptions()
                                                    .name(CLAIM_INDEX)
                                                    .partialFilterExpression(
                                                            new BsonDocument(AVAILABLE_AT, exists)
                                                                    .append(
                                                                            PARKED,
                                                                            BsonBoolean.FALSE))),
                                    new IndexModel(
                                            ascending(KEY, SEQ),
                                            new IndexOptions()
                                                    .name(
                                                            keys.deadLettersBlock()
                                                                    ? KEY_INDEX
                                                                    : LIVE_KEY_INDEX)
                                                    .partialFilterExpression(
                                                            keys.keyIndexFilter())),
                                    new IndexModel(
                                            ascending(DEAD_AT, SEQ),
                                            new IndexOptions()
                                                    .name(DEAD_INDEX)
                                                    .partialFilterExpression(
                                                            new BsonDocument(DEAD_AT, exists))),
                                    new IndexModel(
                                            ascending(KEY, SEQ),
                                            new IndexOptions()
                                                    .name(PARKED_INDEX)
                                                    .partialFilterExpression(
                                                            new BsonDocument(
                                                                    PARKED, BsonBoolean.TRUE)))));
                });
    }

    /**
     * Inserts one message in the caller's transaction.
     *
     * @param transaction the caller's session, with an active transaction
     * @param message the message
     * @throws DuplicateMessageException if a message with the same id is already in the outbox
     * @throws IllegalArgumentException if the session has no active transaction or the message is
     *     over the store's limits
     * @throws OutboxException if the server fails
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
     * @throws OutboxException if the server fails
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
    @SuppressWarnings("NullAway") // DuplicateMessageException documents a null cause as allowed
    void insert(@Nullable ClientSession session, List<Message> messages) {
        Validation.notNull(messages, "messages");
        if (messages.isEmpty()) {
            return;
        }
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < messages.size(); i++) {
            Message m = Validation.notNull(messages.get(i), "messages[" + i + "]");
            Validation.message(m, limits);
            if (!ids.add(m.id())) {
                throw DuplicateMessageException.twiceInOneBatch(m.id());
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
            throw Failures.of("enqueue", collection.getNamespace(), e);
        } catch (MongoBulkWriteException e) {
            for (BulkWriteError error : e.getWriteErrors()) {
                if (ErrorCategory.fromErrorCode(error.getCode()) == ErrorCategory.DUPLICATE_KEY) {
                    throw new DuplicateMessageException(messages.get(error.getIndex()).id(), e);
                }
            }
            throw Failures.of("enqueue", collection.getNamespace(), e);
        } catch (MongoException e) {
            throw Failures.of("enqueue", collection.getNamespace(), e);
        }
    }

    /**
     * Leases up to {@code request.limit()} claimable messages, oldest available first (then in
     * enqueue order), keeping per-key order.
     *
     * <p>The claim reads a page of {@code limit} candidates from the claim index ({@code parked:
     * false, availableAt <= now}, ordered by {@code availableAt, seq}; only ids, keys and
     * positions), and for the keys of the page, in one query where it can, the earlier messages of
     * each key still in the outbox (one range on the key index per key). Unkeyed candidates are
     * taken; a keyed candidate is taken when it is the next message of its key after those this
     * claim took; the others are parked, in the buckets whose lock is free (bucket locks: lock
     * documents {@code bucket-<n>} in {@code <collection>.lock}, taken with one {@code updateMany}
     * from free to this claim, never waited for; a holder that neither renewed nor released a lock
     * for its {@code 3 s} lease is taken over by a waiting removal, judged by the waiter's own
     * monotonic clock, so clock differences between machines do not matter). Under those locks it
     * writes the mark on the message each key's parked candidates wait behind, checks that message
     * is still there, and parks; then it writes the leases (one {@code updateMany}, repeating the
     * claim predicate, with a fresh lease token). While candidates were blocked and the limit is
     * not reached it reads another page, at most 8, each twice the size of the one before up to
     * 1000 rows: parked messages leave the claim index, so each is read once while it waits, and a
     * claim gets past a long line of messages waiting behind their key's head to the head itself.
     * Finally it reads the leased documents by id and keeps those carrying its token.
     *
     * <p>A claim {@linkplain ClaimRequest#member() as a member} first reads the server's clock (its
     * {@code now}, docs/scale-out.md "Clocks"), the buckets the assignment gives its owner and
     * whether the owner's membership lasts by the server's clock ({@code $expr} with {@code
     * $$NOW}); the candidate query then also asks for {@code $or: [{bucket: {$exists: false}},
     * {bucket: {$in: owned}}]}, or only unkeyed messages when the owner owns nothing or its
     * membership has lapsed. A keyed message without a stored bucket (enqueued by a version without
     * membership) gets it computed and written when a member's claim meets it. Per-key order holds
     * whoever claims.
     *
     * @param request who claims, at what time, for how long, and how many at most
     * @return the leased messages in claim order
     * @throws OutboxException if the server fails
     */
    @Override
    public List<Delivery> claim(ClaimRequest request) {
        Validation.notNull(request, "request");
        return call("claim", () -> claimer.claim(request));
    }

    /**
     * Removes the completed messages with one {@code deleteMany} on owner, lease tokens and ids.
     *
     * <p>The leases the owner still holds are looked up first (by id), so the stale receipts
     * (expired and claimed again, already finished, dead-lettered, foreign or made up) are reported
     * exactly. When keyed messages are among them, the delete runs under their buckets' locks after
     * the keys of those that hold parked messages back are unparked. Should a lease expire and be
     * claimed again between the look-up and the delete, its token no longer matches, nothing is
     * deleted for it, and it is reported stale too.
     *
     * @param completion the owner and the receipts of the published leases
     * @return the stale receipts, for which nothing changed
     * @throws OutboxException if the server fails or its bucket locks cannot be had in time
     */
    @Override
    public Set<String> complete(Completion completion) {
        Validation.notNull(completion, "completion");
        return call("complete", () -> leasing.complete(completion));
    }

    /**
     * Clears the lease and makes the message available again at {@code release.availableAt()},
     * keeping the error and the attempt. Later messages of its key stay blocked.
     *
     * @param release the lease and when to retry
     * @return {@code true} if released, {@code false} if the receipt was stale
     * @throws OutboxException if the server fails
     */
    @Override
    public boolean release(Release release) {
        Validation.notNull(release, "release");
        return call("release", () -> leasing.release(release));
    }

    /**
     * Dead-letters the message: it leaves the claim path ({@code availableAt} is removed) and keeps
     * the reason, the time and the owner that gave it up. When dead letters do not block their key
     * and the message is keyed, its key is unparked first, under its bucket's lock.
     *
     * @param deadLetter the lease and why it is given up
     * @return {@code true} if dead-lettered, {@code false} if the receipt was stale
     * @throws OutboxException if the server fails or its bucket locks cannot be had in time
     */
    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        Validation.notNull(deadLetter, "deadLetter");
        return call("dead-letter", () -> leasing.deadLetter(deadLetter));
    }

    /**
     * Moves the end of live leases to {@code extension.until()} with one {@code updateMany} on
     * owner, lease tokens and ids. Only when fewer matched than were asked are the documents read
     * back to name the stale receipts.
     *
     * @param extension the owner, the receipts and the new end of their leases
     * @return the stale receipts, for which nothing changed
     * @throws OutboxException if the server fails
     */
    @Override
    public Set<String> extend(Extension extension) {
        Validation.notNull(extension, "extension");
        return call("extend", () -> leasing.extend(extension));
    }

    /**
     * Gives back leases of messages that were never handed to a publisher: each is due again at its
     * enqueue time (its old place in claim order), with the attempt its claim counted taken back
     * and the lease cleared. The leases are looked up by id, then given back by one bulk write of
     * compare-and-set updates (each needs its own enqueue time).
     *
     * @param abandonment the owner and the receipts of the untried leases
     * @return the stale receipts, for which nothing changed
     * @throws OutboxException if the server fails
     */
    @Override
    public Set<String> abandon(Abandonment abandonment) {
        Validation.notNull(abandonment, "abandonment");
        return call("abandon", () -> leasing.abandon(abandonment));
    }

    /**
     * Counts the outbox by state with one aggregation per state (grouped by topic), and the keys
     * blocked by a dead letter with one more. Parked messages count as ready. On a large outbox
     * these read the whole collection: an operator's command, not something to poll every second.
     *
     * @param now the time the states are judged at
     * @return the counts
     * @throws OutboxException if the server fails
     */
    @Override
    public OutboxStatistics statistics(Instant now) {
        Validation.notNull(now, "now");
        return call("statistics", () -> admin.statistics(now));
    }

    /**
     * Lists dead letters oldest dead-letter time first (ties in enqueue order) from the {@value
     * #DEAD_INDEX} index. The cursor is opaque: it names the dead-letter time and enqueue order of
     * the last dead letter of the page. A document that is not a valid message (dead-lettered by a
     * claim for that reason) is left out of the items; {@link #lastError} and {@link #discard}
     * still reach it by id.
     *
     * @param query the filter, page size and cursor
     * @return one page
     * @throws IllegalArgumentException if the cursor was not issued by this store
     * @throws OutboxException if the server fails
     */
    @Override
    public DeadLetterPage deadLetters(DeadLetterQuery query) {
        Validation.notNull(query, "query");
        return call("list dead letters", () -> admin.deadLetters(query));
    }

    /**
     * Makes dead letters due again at {@code now} with one {@code updateMany}: attempts reset, the
     * reason and time cleared. A replayed message keeps its place in its key: the later messages of
     * its key stay held back until it is completed.
     *
     * @param ids the message ids (at most {@value DeadLetterQuery#MAX_LIMIT})
     * @param now when they become due
     * @return how many were replayed
     * @throws IllegalArgumentException if the ids are null, too many or hold a null
     * @throws OutboxException if the server fails
     */
    @Override
    public int replay(List<String> ids, Instant now) {
        Validation.notNull(now, "now");
        return call("replay", () -> admin.replay(ids, now));
    }

    /**
     * Replays every dead letter the filter selects, with one {@code updateMany}.
     *
     * @param filter which dead letters (topic, time range)
     * @param now when they become due
     * @return how many were replayed
     * @throws OutboxException if the server fails
     */
    @Override
    public int replayAll(DeadLetterQuery filter, Instant now) {
        return call("replay", () -> admin.replayAll(filter, now));
    }

    /**
     * Deletes dead letters for good. When dead letters block their key, the keys of those that hold
     * parked messages back are unparked first, under their buckets' locks.
     *
     * @param ids the message ids (at most {@value DeadLetterQuery#MAX_LIMIT})
     * @return how many were discarded
     * @throws IllegalArgumentException if the ids are null, too many or hold a null
     * @throws OutboxException if the server fails or its bucket locks cannot be had in time
     */
    @Override
    public int discard(List<String> ids) {
        return call("discard", () -> admin.discard(ids));
    }

    /**
     * Discards every dead letter the filter selects, {@value DeadLetterQuery#MAX_LIMIT} at a time.
     *
     * @param filter which dead letters (topic, time range)
     * @return how many were discarded
     * @throws OutboxException if the server fails or its bucket locks cannot be had in time
     */
    @Override
    public int discardAll(DeadLetterQuery filter) {
        return call("discard", () -> admin.discardAll(filter));
    }

    /**
     * The error of the last release of a message, or the reason it was dead-lettered.
     *
     * @param id the message id
     * @return the last error, empty when the message is unknown or never failed
     * @throws OutboxException if the server fails
     */
    @Override
    public Optional<String> lastError(String id) {
        return call("lastError", () -> admin.lastError(id));
    }

    /**
     * Starts or renews a membership until the server's time plus {@code lease}, drops the members
     * whose lease ended by the server's clock, and writes the rendezvous assignment over the live
     * members if it changed. The server's time is read once with the {@code hello} command; the
     * member document is upserted, the lapsed ones deleted, and the owners document replaced by
     * compare-and-set on its version (read before the members), retried while another renewal or
     * leave wins; concurrent renewals therefore never write an assignment that leaves out a member
     * that renewed before them.
     *
     * @param member the member id (at most 255 characters)
     * @param lease {@link OutboxMembership#MIN_LEASE} to {@link OutboxMembership#MAX_LEASE}
     * @return the member's buckets, the live members, and the lease end and renewal time by the
     *     server's clock (milliseconds)
     * @throws IllegalArgumentException if the member id or the lease is out of range
     * @throws OutboxException if the server fails, or the assignment could not be written after 100
     *     lost compare-and-sets in a row
     */
    @Override
    public Membership renew(String member, Duration lease) {
        OutboxMembership.check(member, lease);
        Membership renewed = call("renew", () -> members.renew(member, lease));
        keys.sweep(renewed.buckets(), collection.getNamespace());
        return renewed;
    }

    /**
     * Ends a membership at once: deletes the member document and writes the assignment over the
     * remaining live members (no owner when none is left). Leaving as a member that is not one
     * changes nothing.
     *
     * @param member the member id
     * @throws IllegalArgumentException if the member id is null
     * @throws OutboxException if the server fails
     */
    @Override
    public void leave(String member) {
        Validation.notNull(member, "member");
        call(
                "leave",
                () -> {
                    members.leave(member);
                    return Boolean.TRUE;
                });
    }

    /**
     * Lists the recorded members ordered by id, each live when its lease end is after the server's
     * time, with the number of buckets it owns.
     *
     * @return the members
     * @throws OutboxException if the server fails
     */
    @Override
    public List<Member> members() {
        return call("members", members::members);
    }

    /** Runs a store operation, turning the driver's exceptions into the library's. */
    private <T> T call(String what, Supplier<T> operation) {
        try {
            return operation.get();
        } catch (MongoException e) {
            throw Failures.of(what, collection.getNamespace(), e);
        }
    }

    /** The collection, for tests in this package. */
    MongoCollection<BsonDocument> collection() {
        return collection;
    }

    /** The members of this store, for tests in this package. */
    Members membership() {
        return members;
    }

    /** Per-key order of this store, for tests in this package. */
    KeyOrder keyOrder() {
        return keys;
    }

    @Override
    public String toString() {
        return "MongoOutboxStore["
                + collection.getNamespace()
                + ", writeConcern="
                + collection.getWriteConcern()
                + ", deadLettersBlockTheirKey="
                + keys.deadLettersBlock()
                + "]";
    }

    /**
     * Configures a {@link MongoOutboxStore}. Give either {@link #client(MongoClient)} and {@link
     * #database(String)}, or {@link #database(MongoDatabase)}.
     */
    public static final class Builder {
        private @Nullable MongoClient client;
        private @Nullable String databaseName;
        private @Nullable MongoDatabase database;
        private String collection = DEFAULT_COLLECTION;
        private WriteConcern writeConcern = WriteConcern.MAJORITY;
        private MessageLimits limits = MessageLimits.DEFAULTS;
        private Clock clock = Clock.systemUTC();
        private boolean deadLettersBlockTheirKey = true;
        private Duration lockLease = BucketLocks.LEASE;
        private Duration lockWait = BucketLocks.WAIT;

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
         * Sets the clock that stamps enqueue time (a message without {@code notBefore} is available
         * from then) and the time a claim dead-letters a document that is not a valid message.
         * Lease decisions never use it; they use {@link ClaimRequest#now()}. The bucket locks use
         * no wall clock at all, and member leases ({@link MongoOutboxStore#renew}) are started and
         * judged by the MongoDB server's clock, never by this one.
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
         * Sets whether a dead letter holds back the later messages of its key until it is replayed
         * or discarded (default {@code true}). With {@code false} a dead letter stops counting as
         * an earlier message of its key the moment it is dead-lettered (and its key moves on); a
         * replayed dead letter then goes out after later messages of its key. Call {@link
         * MongoOutboxStore#createIndexes()} after changing it: the key index differs.
         *
         * @param block {@code true} to block, {@code false} to let dead letters stop counting
         * @return this builder
         */
        public Builder deadLettersBlockTheirKey(boolean block) {
            this.deadLettersBlockTheirKey = block;
            return this;
        }

        /** Sets the bucket locks' lease and wait bound; for tests in this package. */
        Builder bucketLocks(Duration lease, Duration wait) {
            this.lockLease = lease;
            this.lockWait = wait;
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
            MongoDatabase given = database;
            if (given != null) {
                return new MongoOutboxStore(this, given);
            }
            MongoClient c = client;
            String name = databaseName;
            if (c == null || name == null) {
                throw new IllegalStateException(
                        "a database is required: call database(MongoDatabase), or "
                                + "client(MongoClient) and database(String)"
                                + (c == null ? "" : " (database name missing)"));
            }
            return new MongoOutboxStore(this, c.getDatabase(name));
        }
    }
}
