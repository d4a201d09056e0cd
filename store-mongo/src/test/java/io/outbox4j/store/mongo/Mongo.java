package io.outbox4j.store.mongo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox4j.api.Message;
import io.outbox4j.testservices.MongoServer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
        if (transactionsUnsupported().isPresent()) {
            store.insert(null, messages);
            return;
        }
        try (ClientSession session = client.startSession()) {
            session.startTransaction();
            try {
                store.enqueueAll(session, messages);
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
