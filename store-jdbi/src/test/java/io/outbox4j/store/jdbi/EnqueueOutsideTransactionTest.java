package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.Message;
import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import java.sql.Connection;
import java.util.List;
import java.util.function.Supplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Enqueue through a handle or connection in auto-commit mode is refused with a message that says
 * why, and inserts nothing, on every dialect: such a message would commit on its own, apart from
 * the business change.
 */
class EnqueueOutsideTransactionTest {
    /** The databases, with the dialect each store is built with. */
    @SuppressWarnings("ImmutableEnumChecker") // method references to the shared test databases
    enum Database {
        H2(() -> Databases.h2("no_tx"), Dialect.H2),
        POSTGRESQL(Databases::postgres, Dialect.POSTGRESQL),
        MARIADB(Databases::mariaDb, Dialect.MARIADB),
        MYSQL_DIALECT_ON_MARIADB(Databases::mariaDb, Dialect.MYSQL);

        final Supplier<Jdbi> jdbi;
        final Dialect dialect;

        Database(Supplier<Jdbi> jdbi, Dialect dialect) {
            this.jdbi = jdbi;
            this.dialect = dialect;
        }
    }

    private static Message message(String id) {
        return Message.builder().id(id).topic("orders").module("test").payload("{}").build();
    }

    private static long rows(Jdbi jdbi, JdbiOutboxStore store) {
        return jdbi.withHandle(
                h ->
                        h.createQuery("SELECT COUNT(*) FROM " + store.sql().table)
                                .mapTo(Long.class)
                                .one());
    }

    private static JdbiOutboxStore store(Database db, Jdbi jdbi) {
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(jdbi)
                        .dialect(db.dialect)
                        .tableName(
                                "outbox_no_tx_"
                                        + db.dialect.name().toLowerCase(java.util.Locale.ROOT))
                        .build();
        store.createSchemaIfAbsent();
        jdbi.useHandle(h -> h.execute(store.sql().deleteAll));
        return store;
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void enqueueThroughAnAutoCommitHandle_isRefusedClearly_andInsertsNothing(Database db) {
        Jdbi jdbi = db.jdbi.get();
        JdbiOutboxStore store = store(db, jdbi);
        try (Handle h = jdbi.open()) {
            assertThatThrownBy(() -> store.enqueue(h, message("one")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "transaction must not be in auto-commit mode: the message would commit"
                                    + " on its own, apart from the business change; enqueue inside"
                                    + " jdbi.useTransaction(...) or jdbi.inTransaction(...) (or build"
                                    + " the store with allowEnqueueOutsideTransaction(true))");
            assertThatThrownBy(() -> store.enqueueAll(h, List.of(message("a"), message("b"))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("transaction must not be in auto-commit mode");
        }
        assertThat(rows(jdbi, store)).as("rows inserted").isZero();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void enqueueThroughAnAutoCommitConnection_isRefusedClearly_andInsertsNothing(Database db)
            throws Exception {
        Jdbi jdbi = db.jdbi.get();
        JdbiOutboxStore store = store(db, jdbi);
        try (Handle h = jdbi.open()) {
            Connection c = h.getConnection();
            assertThat(c.getAutoCommit()).as("a fresh connection is in auto-commit").isTrue();
            assertThatThrownBy(() -> store.jdbc().enqueue(c, message("one")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "transaction must not be in auto-commit mode: the message would commit"
                                    + " on its own, apart from the business change; call"
                                    + " connection.setAutoCommit(false) first and commit when the"
                                    + " business change is done (or build the store with"
                                    + " allowEnqueueOutsideTransaction(true))");
            assertThatThrownBy(
                            () -> store.jdbc().enqueueAll(c, List.of(message("a"), message("b"))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("transaction must not be in auto-commit mode");
            assertThat(c.getAutoCommit()).as("the connection is left as it was").isTrue();
        }
        assertThat(rows(jdbi, store)).as("rows inserted").isZero();
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aStoreBuiltToAllowIt_enqueuesOnAnAutoCommitConnection(Database db) {
        Jdbi jdbi = db.jdbi.get();
        JdbiOutboxStore refusing = store(db, jdbi);
        JdbiOutboxStore lenient =
                JdbiOutboxStore.builder(jdbi)
                        .dialect(db.dialect)
                        .tableName(refusing.tableName())
                        .allowEnqueueOutsideTransaction(true)
                        .build();
        jdbi.useHandle(h -> lenient.enqueueAll(h, List.of(message("a"), message("b"))));
        assertThat(rows(jdbi, lenient)).as("rows committed by the enqueue itself").isEqualTo(2);
    }
}
