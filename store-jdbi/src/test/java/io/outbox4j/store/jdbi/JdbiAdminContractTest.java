package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.OutboxAdminContract;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Jdbi;

/** The admin kit on one database: a subclass names the database. */
abstract class JdbiAdminContractTest extends OutboxAdminContract {
    private static final Map<Class<?>, JdbiOutboxStore> STORES = new ConcurrentHashMap<>();
    private static final Map<Class<?>, Jdbi> JDBIS = new ConcurrentHashMap<>();

    /** Returns a new {@code Jdbi} (with its own pool) over the database under test. */
    abstract Jdbi newJdbi();

    /** The dialect to force, or null to let the store detect it. */
    JdbiOutboxStore.Dialect dialect() {
        return null;
    }

    String table() {
        return "outbox_admin_tck";
    }

    private Jdbi jdbi() {
        return JDBIS.computeIfAbsent(getClass(), k -> newJdbi());
    }

    private JdbiOutboxStore first() {
        return STORES.computeIfAbsent(
                getClass(),
                k -> {
                    JdbiOutboxStore.Builder b = JdbiOutboxStore.builder(jdbi()).tableName(table());
                    JdbiOutboxStore s = (dialect() == null ? b : b.dialect(dialect())).build();
                    s.createSchemaIfAbsent();
                    return s;
                });
    }

    @Override
    protected OutboxStore store() {
        return first();
    }

    @Override
    protected void resetStore() {
        jdbi().useHandle(h -> h.execute(first().sql().deleteAll));
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        jdbi().useTransaction(h -> first().enqueueAll(h, messages));
    }
}
