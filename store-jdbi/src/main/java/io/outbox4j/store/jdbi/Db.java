package io.outbox4j.store.jdbi;

import io.outbox4j.api.StoreUnavailableException;
import java.sql.SQLException;
import java.util.function.Supplier;
import org.jdbi.v3.core.ConnectionException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * How the dispatch and admin sides reach the database: short-lived handles from the {@link Jdbi},
 * one more try when the database aborted the work for a deadlock or a conflict, and Jdbi's
 * exceptions wrapped in the library's own.
 */
record Db(Jdbi jdbi, SqlDialect dialect, String ddlResource) {
    /**
     * Tries of work the database aborted for a deadlock or a conflict. Without a lock shared by
     * every claimer, InnoDB (MariaDB, MySQL) now and then picks a completion or a claim as the
     * victim of a deadlock on index records; it is retried after a short random pause.
     */
    private static final int TRIES = 6;

    /** Runs work in one transaction of its own (the dialect's isolation level). */
    <T> T transaction(String operation, HandleCallback<T, RuntimeException> work) {
        return run(operation, () -> jdbi.withHandle(h -> dialect.inTransaction(h, work)));
    }

    /**
     * Runs one statement on a handle of its own: as it is on an auto-commit connection (the JDBC
     * default), in a transaction when the pool hands out connections with auto-commit off.
     */
    <T> T statement(String operation, HandleCallback<T, RuntimeException> work) {
        return run(
                operation,
                () ->
                        jdbi.withHandle(
                                h ->
                                        isAutoCommit(h)
                                                ? work.withHandle(h)
                                                : dialect.inTransaction(h, work)));
    }

    /**
     * Runs work, again when the database aborted it for a deadlock or a conflict; wraps what Jdbi
     * throws.
     */
    <T> T run(String operation, Supplier<T> work) {
        for (int attempt = 1; ; attempt++) {
            try {
                return work.get();
            } catch (JdbiException | Sql.Failure e) {
                if (attempt < TRIES && SqlErrors.transientConflict(e)) {
                    pauseBeforeRetry(attempt);
                    continue;
                }
                if (SqlErrors.missingTable(e)) {
                    throw new StoreUnavailableException(missingTable(), e);
                }
                throw new StoreUnavailableException(
                        operation + " on table " + quotedName() + " failed: " + e.getMessage(), e);
            }
        }
    }

    /** 1 to 2^attempt milliseconds, at random, so that two victims do not collide again. */
    private static void pauseBeforeRetry(int attempt) {
        long millis = 1 + java.util.concurrent.ThreadLocalRandom.current().nextLong(1L << attempt);
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static boolean isAutoCommit(Handle h) {
        try {
            return h.getConnection().getAutoCommit();
        } catch (SQLException e) {
            throw new ConnectionException(e);
        }
    }

    /** What to do about a missing table, naming the DDL to run. */
    String missingTable() {
        String rename =
                dialect.tableName.equals(JdbiOutboxStore.DEFAULT_TABLE_NAME)
                        ? ""
                        : " (with "
                                + JdbiOutboxStore.DEFAULT_TABLE_NAME
                                + " renamed to "
                                + dialect.tableName
                                + ")";
        String others = dialect.companionTables();
        return "table "
                + quotedName()
                + others
                + " does not exist; create "
                + (others.isEmpty() ? "it" : "them")
                + " with "
                + ddlResource
                + rename
                + " or call createSchemaIfAbsent()";
    }

    String quotedName() {
        return '"' + dialect.tableName + '"';
    }
}
