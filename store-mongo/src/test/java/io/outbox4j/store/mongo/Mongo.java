package io.outbox4j.store.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox4j.api.Message;
import io.outbox4j.testservices.MongoServer;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.junit.jupiter.api.Assumptions;

/**
 * Test plumbing: clients of the shared {@link MongoServer}, fresh collections, transactional
 * enqueue.
 */
final class Mongo {
    static final String DATABASE = "outbox4j_store_mongo_test";
    private static final AtomicInteger COLLECTIONS = new AtomicInteger();
    private static MongoClient first;
    private static MongoClient second;

    private Mongo() {}

    static MongoServer server() {
        return MongoServer.shared();
    }

    /** The first client of the JVM, closed at exit. */
    static synchronized MongoClient client() {
        if (first == null) {
            first = newClient();
        }
        return first;
    }

    /** A second, independent client (its own connection pool), as another process would have. */
    static synchronized MongoClient secondClient() {
        if (second == null) {
            second = newClient();
        }
        return second;
    }

    private static MongoClient newClient() {
        MongoClient c =
                MongoClients.create(
                        MongoClientSettings.builder()
                                .applyConnectionString(
                                        new ConnectionString(server().connectionString()))
                                .applyToClusterSettings(
                                        s -> s.serverSelectionTimeout(10, TimeUnit.SECONDS))
                                .build());
        Runtime.getRuntime().addShutdownHook(new Thread(c::close));
        return c;
    }

    /** A collection name no other test uses. */
    static String freshCollection(String prefix) {
        return prefix + "_" + ProcessHandle.current().pid() + "_" + COLLECTIONS.incrementAndGet();
    }

    static MongoOutboxStore store(MongoClient client, String collection) {
        return MongoOutboxStore.builder()
                .client(client)
                .database(DATABASE)
                .collection(collection)
                .build();
    }

    /** A store over {@code collection} through the first client, with its indexes created. */
    static MongoOutboxStore indexedStore(String collection) {
        MongoOutboxStore store = store(client(), collection);
        store.createIndexes();
        return store;
    }

    /**
     * A store over a fresh collection named after {@code prefix}, through the first client, whose
     * clock stands still at {@code now}; with its indexes created.
     */
    static MongoOutboxStore storeAt(String prefix, Instant now) {
        MongoOutboxStore store =
                MongoOutboxStore.builder()
                        .client(client())
                        .database(DATABASE)
                        .collection(freshCollection(prefix))
                        .clock(Clock.fixed(now, ZoneOffset.UTC))
                        .build();
        store.createIndexes();
        return store;
    }

    /**
     * Writes by hand, past the store, a document {@code written-by-hand} that is not a valid
     * message (its topic is a number), due at once.
     */
    static void insertNotAMessage(MongoOutboxStore store) {
        store.collection()
                .insertOne(
                        new BsonDocument("_id", new BsonString("written-by-hand"))
                                .append("seq", new BsonInt64(0))
                                .append("topic", new BsonInt32(42))
                                .append("availableAt", new BsonInt64(0))
                                .append("parked", BsonBoolean.FALSE)
                                .append("headers", new BsonArray()));
    }

    /** Deletes every document of the store's collection. */
    static void deleteAll(MongoOutboxStore store) {
        store.collection().deleteMany(new BsonDocument());
    }

    static Optional<String> transactionsUnsupported() {
        return server().transactionsUnsupportedReason();
    }

    static void assumeTransactions() {
        Optional<String> reason = transactionsUnsupported();
        Assumptions.assumeTrue(
                reason.isEmpty(), () -> "needs a MongoDB replica set: " + reason.orElse(""));
    }

    /**
     * Enqueues in a committed transaction when the server has them; on a server without sessions
     * (the in-JVM server) through the store's session-less insert, the same code path less the
     * session.
     */
    static void enqueueCommitted(
            MongoOutboxStore store, MongoClient client, List<Message> messages) {
        inCommittedTransaction(
                client, s -> store.enqueueAll(s, messages), () -> store.insert(null, messages));
    }

    /**
     * Runs {@code write} in a transaction of {@code client} and commits it (aborts it if the write
     * throws); on a server without sessions runs {@code sessionless} instead.
     */
    static void inCommittedTransaction(
            MongoClient client, Consumer<ClientSession> write, Runnable sessionless) {
        if (transactionsUnsupported().isPresent()) {
            sessionless.run();
            return;
        }
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            try {
                write.accept(session);
            } catch (RuntimeException e) {
                session.abortTransaction();
                throw e;
            }
            session.commitTransaction();
        }
    }

    /** Enqueues in a transaction that is aborted; needs a server with transactions. */
    static void enqueueRolledBack(
            MongoOutboxStore store, MongoClient client, List<Message> messages) {
        assumeTransactions();
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            store.enqueueAll(session, messages);
            session.abortTransaction();
        }
    }
}
