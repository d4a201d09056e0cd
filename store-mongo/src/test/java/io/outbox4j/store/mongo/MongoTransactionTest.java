package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Enqueue joins the caller's multi-document transaction: the event commits and aborts with the
 * business document. These need sessions and transactions, i.e. a replica set (Testcontainers, or
 * {@code OUTBOX4J_MONGODB_URI}); against the in-JVM mongo-java-server, which has neither, each test
 * is skipped with that reason.
 */
class MongoTransactionTest {
    private MongoOutboxStore store;
    private MongoCollection<BsonDocument> orders;

    @BeforeEach
    void freshCollections() {
        Mongo.assumeTransactions();
        store = Mongo.indexedStore(Mongo.freshCollection("tx_outbox"));
        orders =
                Mongo.client()
                        .getDatabase(Mongo.DATABASE)
                        .getCollection(Mongo.freshCollection("tx_orders"), BsonDocument.class);
        orders.insertOne(new BsonDocument("_id", new BsonString("warm-up")));
    }

    private static Message event(String id) {
        return Message.builder()
                .id(id)
                .topic("orders.created")
                .module("orders")
                .payload("order " + id)
                .build();
    }

    private List<Delivery> claimAll() {
        return store.claim(
                new ClaimRequest(
                        "relay", Instant.now().plusSeconds(1), Duration.ofMinutes(1), 100));
    }

    @Test
    void enqueue_commitsTogetherWithTheBusinessDocument() {
        try (ClientSession session = Mongo.client().startSession()) {
            session.withTransaction(
                    () -> {
                        orders.insertOne(
                                session, new BsonDocument("_id", new BsonString("order-1")));
                        store.enqueueAll(session, List.of(event("e-1"), event("e-2")));
                        return null;
                    });
        }
        assertThat(orders.countDocuments(new BsonDocument("_id", new BsonString("order-1"))))
                .isEqualTo(1);
        assertThat(claimAll()).extracting(d -> d.message().id()).containsExactly("e-1", "e-2");
    }

    @Test
    void enqueue_abortedWithTheBusinessDocument_leavesNothing() {
        try (ClientSession session = Mongo.client().startSession()) {
            session.startTransaction();
            orders.insertOne(session, new BsonDocument("_id", new BsonString("order-2")));
            store.enqueue(session, event("e-3"));
            session.abortTransaction();
        }
        assertThat(orders.countDocuments(new BsonDocument("_id", new BsonString("order-2"))))
                .isZero();
        assertThat(store.collection().countDocuments()).isZero();
        assertThat(claimAll()).isEmpty();
    }

    @Test
    void enqueue_isInvisibleToClaimsUntilTheTransactionCommits() {
        try (ClientSession session = Mongo.client().startSession()) {
            session.startTransaction();
            store.enqueue(session, event("e-4"));
            assertThat(claimAll()).as("an uncommitted event must not be claimable").isEmpty();
            session.commitTransaction();
        }
        assertThat(claimAll()).extracting(d -> d.message().id()).containsExactly("e-4");
    }

    @Test
    void enqueue_duplicateIdInsideATransactionIsReportedAsDuplicate() {
        try (ClientSession session = Mongo.client().startSession()) {
            session.withTransaction(
                    () -> {
                        store.enqueue(session, event("e-5"));
                        return null;
                    });
            session.startTransaction();
            assertThatThrownBy(() -> store.enqueue(session, event("e-5")))
                    .isInstanceOf(DuplicateMessageException.class)
                    .hasMessageContaining("'e-5'");
            if (session.hasActiveTransaction()) {
                session.abortTransaction();
            }
        }
        assertThat(store.collection().countDocuments()).isEqualTo(1);
    }

    @Test
    void enqueue_withASessionThatHasNoTransactionIsRejected() {
        try (ClientSession session = Mongo.client().startSession()) {
            assertThatThrownBy(() -> store.enqueue(session, event("e-6")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(
                            "transaction must be a ClientSession with an active transaction");
        }
        assertThat(store.collection().countDocuments()).isZero();
    }
}
