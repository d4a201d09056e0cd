package io.outbox4j.store.mongo;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.OutboxMembershipContract;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * Runs the membership contract kit against {@link MongoOutboxStore} on the shared MongoDB server.
 * The second store has its own {@code MongoClient}, as a second relay process would. Every rule
 * runs on the in-JVM mongo-java-server too: membership needs no sessions or transactions.
 */
@DisplayName("MongoOutboxStore honours the membership contract")
class MongoOutboxMembershipContractTest extends OutboxMembershipContract {
    private static final String COLLECTION = Mongo.freshCollection("members_tck");
    private static MongoOutboxStore store;
    private static MongoOutboxStore second;

    @BeforeAll
    static void createStores() {
        store = Mongo.indexedStore(COLLECTION);
        second = Mongo.store(Mongo.secondClient(), COLLECTION);
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
        Mongo.deleteAll(store);
        store.membership().clear();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        Mongo.enqueueCommitted(store, Mongo.client(), messages);
    }
}
