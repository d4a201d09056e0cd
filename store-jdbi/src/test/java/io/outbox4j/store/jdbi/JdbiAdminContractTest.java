package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.store.jdbi.KitDatabase.KitStore;
import io.outbox4j.tck.OutboxAdminContract;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The admin kit on one database: a subclass names the database. */
abstract class JdbiAdminContractTest extends OutboxAdminContract {
    private static final Map<Class<?>, KitStore> STORES = new ConcurrentHashMap<>();

    private final KitDatabase database;

    /** The kit on {@code database}, in its table {@code outbox_admin_tck}. */
    JdbiAdminContractTest(KitDatabase database) {
        this.database = database;
    }

    private KitStore first() {
        return STORES.computeIfAbsent(getClass(), k -> database.createStore("outbox_admin_tck"));
    }

    @Override
    protected OutboxStore store() {
        return first().store();
    }

    @Override
    protected void resetStore() {
        first().deleteAll();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        first().enqueueCommitted(messages);
    }
}
