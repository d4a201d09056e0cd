package io.outbox4j.store.mongo;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.OutboxAdminContract;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/** Runs the admin contract kit against {@link MongoOutboxStore} on the shared MongoDB server. */
@DisplayName("MongoOutboxStore honours the admin contract")
class MongoOutboxAdminContractTest extends OutboxAdminContract {
    private static final String COLLECTION = Mongo.freshCollection("admin_tck");
    private static MongoOutboxStore store;

    @BeforeAll
    static void createStore() {
        store = Mongo.indexedStore(COLLECTION);
    }

    @Override
    protected OutboxStore store() {
        return store;
    }

    @Override
    protected void resetStore() {
        Mongo.deleteAll(store);
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        Mongo.enqueueCommitted(store, Mongo.client(), messages);
    }
}
