package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import java.util.List;
import java.util.function.Supplier;
import org.jdbi.v3.core.Jdbi;
import org.jspecify.annotations.Nullable;

/**
 * A database the tck's kits run on: where its {@code Jdbi}s come from (each with a pool of its own,
 * so two of them act like two application instances), the dialect to force (null: the store detects
 * it) and the suffix of the kits' tables on it.
 */
record KitDatabase(Supplier<Jdbi> jdbis, @Nullable Dialect dialect, String tableSuffix) {
    static final KitDatabase POSTGRES = new KitDatabase(Databases::postgres, null, "");
    static final KitDatabase MARIADB = new KitDatabase(Databases::mariaDb, null, "");

    /**
     * The MySQL dialect on MariaDB (no MySQL server here), in tables of its own: it exercises the
     * statements MySQL needs that MariaDB does not (completion without {@code DELETE … RETURNING}).
     */
    static final KitDatabase MYSQL_ON_MARIADB =
            new KitDatabase(Databases::mariaDb, Dialect.MYSQL, "_mysql");

    /** The H2 in-memory database of that name. */
    static KitDatabase h2(String name) {
        return new KitDatabase(() -> Databases.h2(name), null, "");
    }

    /** Returns a new {@code Jdbi} (with its own pool) over this database. */
    Jdbi newJdbi() {
        return jdbis.get();
    }

    /**
     * A builder of a store over {@code table} (with this database's suffix) through {@code jdbi}.
     */
    JdbiOutboxStore.Builder builder(Jdbi jdbi, String table) {
        JdbiOutboxStore.Builder b = JdbiOutboxStore.builder(jdbi).tableName(table + tableSuffix);
        return dialect == null ? b : b.dialect(dialect);
    }

    /** Builds a store over {@code table} on a new {@code Jdbi}, and creates the table if absent. */
    KitStore createStore(String table) {
        Jdbi jdbi = newJdbi();
        JdbiOutboxStore store = builder(jdbi, table).build();
        store.createSchemaIfAbsent();
        return new KitStore(jdbi, store);
    }

    /** A kit's store and the {@code Jdbi} it was built on, for the kit's setup hooks. */
    record KitStore(Jdbi jdbi, JdbiOutboxStore store) {
        /** Deletes every row of the store's table. */
        void deleteAll() {
            jdbi.useHandle(h -> h.execute(store.sql().deleteAll));
        }

        /** Enqueues the messages in one transaction of its own and commits it. */
        void enqueueCommitted(List<Message> messages) {
            jdbi.useTransaction(h -> store.enqueueAll(h, messages));
        }
    }
}
