package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.regex.Pattern;

/**
 * The SQL of one dialect for one table, fixed when the store is built. The only variable parts are
 * the table name, validated against {@link #TABLE_NAME} and quoted, and the number of {@code ?}
 * placeholders of the list statements; no value is ever written into SQL text.
 */
final class Sql {
    /**
     * The identifiers a table may be named with: at most 63 characters, the smallest limit of the
     * dialects.
     */
    static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    /** The message columns a claim reads, in {@link JdbiOutboxStore}'s mapping order. */
    private static final String MESSAGE_COLUMNS =
            "id, topic, msg_key, module, content_type, payload, headers, occurred_at, not_before, attempts";

    final Dialect dialect;
    final String table;

    /**
     * Inserts one message; on PostgreSQL an existing id inserts nothing (update count 0) instead of
     * failing.
     */
    final String insertOne;

    /** Inserts one message of a batch; a duplicate id fails the statement. */
    final String insert;

    /**
     * PostgreSQL: the whole claim. MariaDB and MySQL: the locking read of the claim transaction.
     * H2: the plain read of the candidates (for a {@code FOR UPDATE} H2 stops walking the index in
     * order: it reads, sorts and locks every claimable row, so its claim locks by updating instead,
     * see {@link #claimUpdateReturning}).
     */
    final String claim;

    final String release;
    final String deadLetter;

    Sql(Dialect dialect, String tableName) {
        this.dialect = dialect;
        this.table = quote(dialect, tableName);
        this.insert =
                "INSERT INTO "
                        + table
                        + " (id, topic, msg_key, module, content_type, payload, headers,"
                        + " occurred_at, not_before, available_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        this.insertOne =
                dialect == Dialect.POSTGRESQL ? insert + " ON CONFLICT (id) DO NOTHING" : insert;
        String claimable =
                " WHERE dead_at IS NULL AND available_at <= ? ORDER BY available_at, seq LIMIT ?";
        switch (dialect) {
            case POSTGRESQL:
                // One statement: lock the oldest claimable rows, skipping rows other claimers hold,
                // and move them.
                this.claim =
                        "UPDATE "
                                + table
                                + " AS t SET available_at = ?, lease_owner = ?, receipt = ?,"
                                + " attempts = t.attempts + 1"
                                + " FROM (SELECT id, available_at AS was_available_at, seq FROM "
                                + table
                                + claimable
                                + " FOR UPDATE SKIP LOCKED) AS c"
                                + " WHERE t.id = c.id"
                                + " RETURNING t.id, t.topic, t.msg_key, t.module, t.content_type, t.payload, t.headers,"
                                + " t.occurred_at, t.not_before, t.attempts, c.was_available_at, c.seq";
                break;
            case H2:
                this.claim =
                        "SELECT id, available_at AS was_available_at, seq FROM "
                                + table
                                + claimable;
                break;
            default:
                this.claim =
                        "SELECT "
                                + MESSAGE_COLUMNS
                                + ", available_at AS was_available_at, seq FROM "
                                + table
                                + claimable
                                + " FOR UPDATE SKIP LOCKED";
        }
        String leased = " WHERE id = ? AND receipt = ? AND lease_owner = ? AND dead_at IS NULL";
        this.release =
                "UPDATE "
                        + table
                        + " SET available_at = ?, last_error = ?, lease_owner = NULL,"
                        + " receipt = NULL"
                        + leased;
        // A dead row has no availability: it drops out of every claim index range, not only out of
        // the filter.
        this.deadLetter =
                "UPDATE "
                        + table
                        + " SET dead_at = ?, dead_reason = ?, available_at = NULL,"
                        + " lease_owner = NULL, receipt = NULL"
                        + leased;
    }

    /**
     * Moves the named rows into the lease: the second statement of a MariaDB or MySQL claim (rows
     * locked).
     */
    String claimUpdate(int rows) {
        return "UPDATE "
                + table
                + " SET available_at = ?, lease_owner = ?, receipt = ?, attempts = attempts + 1"
                + " WHERE id IN ("
                + marks(rows)
                + ")";
    }

    /**
     * H2: moves the candidates into the lease if they are still claimable, and returns those it
     * moved. H2 waits for a row another claimer is moving and then re-checks the condition on the
     * committed row, so a candidate taken meanwhile is skipped, never leased twice.
     */
    String claimUpdateReturning(int rows) {
        return "SELECT "
                + MESSAGE_COLUMNS
                + " FROM FINAL TABLE ("
                + claimUpdate(rows)
                + " AND dead_at IS NULL AND available_at <= ?)";
    }

    /**
     * The predicate of the leases a completion names: the owner, and each (id, receipt) pair
     * exactly. The {@code id IN} list is redundant with the pairs; it lets every planner go through
     * the primary key. Parameters: owner, the ids, then id and receipt of each pair.
     */
    private String leases(int pairs) {
        StringBuilder sb =
                new StringBuilder(" WHERE lease_owner = ? AND dead_at IS NULL AND id IN (")
                        .append(marks(pairs))
                        .append(") AND (id, receipt) IN (");
        for (int i = 0; i < pairs; i++) {
            sb.append(i == 0 ? "(?, ?)" : ", (?, ?)");
        }
        return sb.append(')').toString();
    }

    /** Deletes the named leases and returns the {@code id, receipt} of every deleted row. */
    String complete(int pairs) {
        String delete = "DELETE FROM " + table + leases(pairs);
        switch (dialect) {
            case POSTGRESQL:
            case MARIADB:
                return delete + " RETURNING id, receipt";
            case H2:
                return "SELECT id, receipt FROM OLD TABLE (" + delete + ")";
            default:
                throw new IllegalStateException(dialect + " completes in a transaction");
        }
    }

    /**
     * PostgreSQL: deletes the leases of one claim (one token) with the ids as one array parameter,
     * so the statement text is the same whatever the batch size and is planned once, not per call;
     * returns the {@code id, receipt} of every deleted row.
     */
    String completeOneClaim() {
        return "DELETE FROM "
                + table
                + " WHERE lease_owner = ? AND receipt = ? AND dead_at IS NULL"
                + " AND id = ANY(?) RETURNING id, receipt";
    }

    /**
     * Whether completions go one claim token at a time with an id array ({@link
     * #completeOneClaim()}).
     */
    boolean completesByClaim() {
        return dialect == Dialect.POSTGRESQL;
    }

    /**
     * MySQL (no DELETE … RETURNING): locks the named leases, to be deleted by {@link #deleteIds}.
     */
    String lockLeases(int pairs) {
        return "SELECT id, receipt FROM " + table + leases(pairs) + " FOR UPDATE";
    }

    String deleteIds(int rows) {
        return "DELETE FROM " + table + " WHERE id IN (" + marks(rows) + ")";
    }

    String deleteAll() {
        return "DELETE FROM " + table;
    }

    /** Whether the dialect completes in one statement returning the deleted rows. */
    boolean completesInOneStatement() {
        return dialect != Dialect.MYSQL;
    }

    /** Binds an instant as the dialect's UTC timestamp. */
    void setTime(PreparedStatement st, int index, Instant value) throws SQLException {
        if (value == null) {
            st.setNull(index, java.sql.Types.TIMESTAMP);
        } else if (dialect == Dialect.POSTGRESQL) {
            st.setObject(index, OffsetDateTime.ofInstant(value, ZoneOffset.UTC));
        } else {
            // DATETIME(6) / TIMESTAMP(6) carry no zone: the wall-clock time in UTC, never
            // converted.
            st.setObject(index, LocalDateTime.ofInstant(value, ZoneOffset.UTC));
        }
    }

    /** Reads a UTC timestamp written by {@link #setTime}. */
    Instant getTime(ResultSet rs, String column) throws SQLException {
        if (dialect == Dialect.POSTGRESQL) {
            OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
            return t == null ? null : t.toInstant();
        }
        LocalDateTime t = rs.getObject(column, LocalDateTime.class);
        return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }

    static String quote(Dialect dialect, String identifier) {
        char q = dialect.quote();
        return q + identifier + q;
    }

    private static String marks(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("a list statement needs at least one value");
        }
        return String.join(", ", Collections.nCopies(n, "?"));
    }
}
