package io.outbox4j.benchmarks;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The hand-written baselines: what a competent engineer writes with plain JDBC on the same table
 * shape, without outbox4j. The claim is the same statement shape as the store's PostgreSQL claim
 * (one {@code UPDATE … FROM (SELECT … ORDER BY available_at, seq LIMIT ? FOR UPDATE SKIP LOCKED) …
 * RETURNING}) with the same batch size; the delete is a compare-and-set on owner + lease token, the
 * ids passed as one array.
 */
final class HandWritten {
    private HandWritten() {}

    static String claimSql(String table) {
        String t = Env.q(table);
        return "UPDATE "
                + t
                + " AS t SET available_at = ?, lease_owner = ?, receipt = ?, attempts = t.attempts + 1"
                + " FROM ("
                + claimableIds(t)
                + ") AS c WHERE t.id = c.id"
                + returning("t.");
    }

    /**
     * The competent hand-written claim (issue 27, item 4): the ids chosen in a subquery, {@code
     * UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT ?) RETURNING …}, with the same
     * parameters as {@link #claimSql}, so one loop binds either.
     */
    static String competentClaimSql(String table) {
        String t = Env.q(table);
        return "UPDATE "
                + t
                + " SET available_at = ?, lease_owner = ?, receipt = ?, attempts = attempts + 1"
                + " WHERE id IN ("
                + claimableIds(t)
                + ")"
                + returning("");
    }

    /** The oldest claimable rows' ids, locked: parameters {@code now} and the limit. */
    private static String claimableIds(String quotedTable) {
        return "SELECT id FROM "
                + quotedTable
                + " WHERE dead_at IS NULL AND NOT parked AND available_at <= ?"
                + " ORDER BY available_at, seq LIMIT ? FOR UPDATE SKIP LOCKED";
    }

    /** What a claim returns, in the order {@link Loop#claim} reads it. */
    private static String returning(String alias) {
        StringBuilder b = new StringBuilder(" RETURNING ");
        String[] columns = {
            "id",
            "topic",
            "msg_key",
            "module",
            "content_type",
            "payload",
            "headers",
            "occurred_at",
            "attempts"
        };
        for (int i = 0; i < columns.length; i++) {
            b.append(i == 0 ? "" : ", ").append(alias).append(columns[i]);
        }
        return b.toString();
    }

    /** The competent hand-written delete: by id alone, {@code id = ANY(?)}. */
    static String competentDeleteSql(String table) {
        return "DELETE FROM " + Env.q(table) + " WHERE id = ANY (?)";
    }

    static String deleteSql(String table) {
        return "DELETE FROM "
                + Env.q(table)
                + " WHERE lease_owner = ? AND receipt = ? AND dead_at IS NULL AND id = ANY (?)";
    }

    static String insertSql(String table) {
        return "INSERT INTO "
                + Env.q(table)
                + " (id, topic, msg_key, module, content_type, payload, headers,"
                + " occurred_at, not_before, enqueued_at, available_at)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    }

    /**
     * Binds one hand-written outbox insert: the values outbox4j would store for the same event.
     *
     * @param st a statement of {@link #insertSql}
     * @param id the event id
     * @param key the ordering key
     * @param payload the payload
     * @throws SQLException if binding fails
     */
    static void bindInsert(PreparedStatement st, String id, String key, byte[] payload)
            throws SQLException {
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
        st.setString(1, id);
        st.setString(2, Env.TOPIC);
        st.setString(3, key);
        st.setString(4, Env.MODULE);
        st.setString(5, "application/json");
        st.setBytes(6, payload);
        st.setString(7, "");
        st.setObject(8, now);
        st.setObject(9, null, java.sql.Types.TIMESTAMP_WITH_TIMEZONE);
        st.setObject(10, now);
        st.setObject(11, now);
    }

    /** One claimed row, as a hand-written relay keeps it. */
    @SuppressWarnings("ArrayRecordComponent") // a row to insert: never compared nor hashed
    record Row(
            String id,
            String topic,
            String key,
            String module,
            String contentType,
            byte[] payload,
            String headers,
            OffsetDateTime occurredAt,
            int attempts) {}

    /**
     * A claim/delete loop on one connection of the shared pool: the weak baseline's statements
     * ({@link #claimSql}, the compare-and-set {@link #deleteSql}) or the competent one's ({@link
     * #competentClaimSql}, {@link #competentDeleteSql}).
     */
    static final class Loop implements AutoCloseable {
        private final Connection connection;
        private final PreparedStatement claim;
        private final PreparedStatement delete;
        private final String owner;
        private final Duration lease;
        private final int batch;
        private final boolean competent;
        final Timings claims;
        final Timings deletes;
        private String token;

        Loop(DataSource pool, String table, String owner, Duration lease, int batch)
                throws SQLException {
            this(pool, table, owner, lease, batch, false, new Timings(), new Timings());
        }

        /**
         * A loop of either baseline, recording its statement times into the given timings (shared
         * by the workers of one drain).
         */
        Loop(
                DataSource pool,
                String table,
                String owner,
                Duration lease,
                int batch,
                boolean competent,
                Timings claims,
                Timings deletes)
                throws SQLException {
            this.connection = pool.getConnection();
            connection.setAutoCommit(true);
            this.competent = competent;
            this.claims = claims;
            this.deletes = deletes;
            this.claim =
                    connection.prepareStatement(
                            competent ? competentClaimSql(table) : claimSql(table));
            this.delete =
                    connection.prepareStatement(
                            competent ? competentDeleteSql(table) : deleteSql(table));
            this.owner = owner;
            this.lease = lease;
            this.batch = batch;
        }

        /**
         * Claims the oldest available rows.
         *
         * @return the claimed rows, oldest first; empty when none is available
         * @throws SQLException if the statement fails
         */
        List<Row> claim() throws SQLException {
            long t0 = System.nanoTime();
            OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
            token = UUID.randomUUID().toString();
            claim.setObject(1, now.plus(lease));
            claim.setString(2, owner);
            claim.setString(3, token);
            claim.setObject(4, now);
            claim.setInt(5, batch);
            List<Row> rows = new ArrayList<>(batch);
            try (ResultSet rs = claim.executeQuery()) {
                while (rs.next()) {
                    rows.add(
                            new Row(
                                    rs.getString(1),
                                    rs.getString(2),
                                    rs.getString(3),
                                    rs.getString(4),
                                    rs.getString(5),
                                    rs.getBytes(6),
                                    rs.getString(7),
                                    rs.getObject(8, OffsetDateTime.class),
                                    rs.getInt(9)));
                }
            }
            claims.add(System.nanoTime() - t0);
            return rows;
        }

        /**
         * Deletes the rows of the last claim, if still leased by this loop.
         *
         * @param rows rows of the last claim
         * @throws SQLException if the statement fails
         * @throws IllegalStateException if a row was no longer leased (nothing else claims in a
         *     benchmark)
         */
        void delete(List<Row> rows) throws SQLException {
            long t0 = System.nanoTime();
            String[] ids = new String[rows.size()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = rows.get(i).id();
            }
            Array array = connection.createArrayOf("varchar", ids);
            if (competent) {
                delete.setArray(1, array);
            } else {
                delete.setString(1, owner);
                delete.setString(2, token);
                delete.setArray(3, array);
            }
            int n = delete.executeUpdate();
            array.free();
            deletes.add(System.nanoTime() - t0);
            if (n != rows.size()) {
                throw new IllegalStateException(
                        "deleted " + n + " of " + rows.size() + " claimed rows");
            }
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }
}
