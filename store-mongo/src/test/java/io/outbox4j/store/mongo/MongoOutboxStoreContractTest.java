package io.outbox4j.store.mongo;

import com.mongodb.client.ClientSession;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.OutboxStoreContract;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

/**
 * Runs the store contract kit against {@link MongoOutboxStore} on the shared MongoDB server. The
 * second store has its own {@code MongoClient}, as a second relay process would; a third store over
 * the same collection is built with {@code deadLettersBlockTheirKey(false)}. Dead-letter reasons
 * are read through the store's own {@link io.outbox4j.api.OutboxAdmin}.
 *
 * <p>On a server without sessions and multi-document transactions (the in-JVM mongo-java-server)
 * the rules that need a transaction (rolled back, or committed after a rejected batch) are skipped
 * with the fixture's reason; everything else runs.
 */
@DisplayName("MongoOutboxStore honours the store contract")
class MongoOutboxStoreContractTest extends OutboxStoreContract {
    private static final String COLLECTION = Mongo.freshCollection("tck");
    private static MongoOutboxStore store;
    private static MongoOutboxStore second;
    private static MongoOutboxStore notBlocking;

    @BeforeAll
    static void createStores() {
        store = Mongo.indexedStore(COLLECTION);
        second = Mongo.store(Mongo.secondClient(), COLLECTION);
        notBlocking =
                MongoOutboxStore.builder()
                        .client(Mongo.secondClient())
                        .database(Mongo.DATABASE)
                        .collection(COLLECTION)
                        .deadLettersBlockTheirKey(false)
                        .build();
        notBlocking.createIndexes();
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
    protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
        return Optional.of(notBlocking);
    }

    @Override
    protected void resetStore() {
        Mongo.deleteAll(store);
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        Mongo.enqueueCommitted(store, Mongo.client(), messages);
    }

    @Override
    protected void enqueueOneCommitted(Message message) {
        Mongo.inCommittedTransaction(
                Mongo.client(),
                s -> store.enqueue(s, message),
                () -> store.insert(null, List.of(message)));
    }

    @Override
    protected void enqueueRolledBack(List<Message> messages) {
        Mongo.enqueueRolledBack(store, Mongo.client(), messages);
    }

    /**
     * Needs a transaction: without one (mongo-java-server) an ordered {@code insertMany} keeps the
     * documents before the duplicate, which is what a caller gets who enqueues outside a
     * transaction, and the store refuses that. MongoDB aborts a transaction after any rejected
     * write, so the commit fails and nothing of the batch is kept.
     */
    @Override
    protected void enqueueCommittingDespiteFailure(List<Message> messages) {
        Mongo.assumeTransactions();
        try (ClientSession session = Mongo.client().startSession()) {
            session.startTransaction();
            try {
                store.enqueueAll(session, messages);
            } catch (RuntimeException e) {
                try {
                    session.commitTransaction();
                } catch (RuntimeException commit) {
                    e.addSuppressed(commit);
                }
                throw e;
            }
            session.commitTransaction();
        }
    }

    @Override
    protected Optional<String> transactionsUnsupported() {
        return Mongo.transactionsUnsupported();
    }
}
