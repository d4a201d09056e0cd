package io.outbox4j.store.mongo;

import static io.outbox4j.store.mongo.Documents.DEAD_AT;
import static io.outbox4j.store.mongo.Documents.DEAD_REASON;
import static io.outbox4j.store.mongo.Documents.ID;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.OutboxStoreContract;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * Runs the store contract kit against {@link MongoOutboxStore} on the shared MongoDB server. The
 * second store has its own {@code MongoClient}, as a second relay process would. On a server
 * without multi-document transactions (the in-JVM mongo-java-server) the rules that need a
 * rolled-back transaction are skipped with the fixture's reason; everything else runs.
 */
@DisplayName("MongoOutboxStore honours the store contract")
class MongoOutboxStoreContractTest extends OutboxStoreContract {
    private static final String COLLECTION = Mongo.freshCollection("tck");
    private static MongoOutboxStore store;
    private static MongoOutboxStore second;

    @BeforeAll
    static void createStores() {
        store = Mongo.store(Mongo.client(), COLLECTION);
        second = Mongo.store(Mongo.secondClient(), COLLECTION);
        store.createIndexes();
    }

    @Override
    protected OutboxStore store() {
        return store;
    }

    @Override
    protected OutboxStore secondStore() {
        return second;
    }

    @Override
    protected void resetStore() {
        store.collection().deleteMany(new BsonDocument());
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        Mongo.enqueueCommitted(store, Mongo.client(), messages);
    }

    @Override
    protected void enqueueRolledBack(List<Message> messages) {
        Mongo.enqueueRolledBack(store, Mongo.client(), messages);
    }

    @Override
    protected Optional<String> deadLetterReason(String messageId) {
        BsonDocument d =
                store.collection().find(new BsonDocument(ID, new BsonString(messageId))).first();
        if (d == null || !d.containsKey(DEAD_AT)) {
            return Optional.empty();
        }
        return Optional.of(d.getString(DEAD_REASON).getValue());
    }

    @Override
    protected Optional<String> transactionsUnsupported() {
        return Mongo.transactionsUnsupported();
    }
}
