package io.outbox4j.store.jdbi;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;

/**
 * PostgreSQL 15+: the claim lock is a transaction-scoped advisory lock; candidates are read and
 * locked in one statement ({@code FOR UPDATE SKIP LOCKED}); leases, completions and unparking
 * return what they changed ({@code RETURNING}), and lists travel as one array parameter, so every
 * statement text is the same whatever the batch size and is planned once.
 */
final class PostgresDialect extends SqlDialect {
    /** The first key of the advisory lock: "obx4". */
    private static final int LOCK_CLASS = 0x6f627834;

    private static final String READ_COMMITTED = "read committed";

    private final int lockKey;

    final String lock;
    final String candidates;
    final String lease;
    final String park;
    final String deleteUnkeyed;
    final String deleteKeyed;
    final String deleteKeyedAndUnpark;
    final String unpark;
    final String deleteDead;
    final String extend;
    final String abandon;

    /**
     * Set once a transaction found itself not in READ COMMITTED (the server's or the pool's
     * default): from then on every transaction asks for it explicitly.
     */
    private volatile boolean askForReadCommitted;

    PostgresDialect(String tableName, boolean deadLettersBlock) {
        super(tableName, '"', deadLettersBlock, Orders.PLAIN);
        this.lockKey = tableName.hashCode();
        // The level comes back with the lock: the statements after it must see every claim and
        // completion committed before it was granted, which only READ COMMITTED gives.
        this.lock =
                "SELECT current_setting('transaction_isolation') AS level"
                        + " FROM pg_advisory_xact_lock(:class, :key)";
        this.candidates =
                "SELECT c.id, c.seq, c.msg_key, "
                        + predecessor
                        + " AS prev_seq FROM "
                        + table
                        + " c"
                        + claimable
                        + " FOR UPDATE OF c SKIP LOCKED";
        this.lease =
                "UPDATE "
                        + table
                        + " SET available_at = :until, lease_owner = :owner, receipt = :token,"
                        + " attempts = attempts + 1 WHERE id = ANY(:ids) RETURNING "
                        + MESSAGE_COLUMNS;
        this.park = "UPDATE " + table + " SET parked = TRUE WHERE id = ANY(:ids)";
        String ofOneClaim =
                " WHERE lease_owner = :owner AND receipt = :token AND dead_at IS NULL"
                        + " AND id = ANY(:ids)";
        this.deleteUnkeyed =
                "DELETE FROM "
                        + table
                        + ofOneClaim
                        + " AND msg_key IS NULL RETURNING id, receipt, msg_key";
        this.deleteKeyed = "DELETE FROM " + table + ofOneClaim + " RETURNING id, receipt, msg_key";
        String firstParked =
                " CROSS JOIN LATERAL (SELECT x.id FROM "
                        + table
                        + " x WHERE x.msg_key = k.msg_key AND x.parked ORDER BY x.seq LIMIT "
                        + UNPARK_LIMIT
                        + ") w";
        this.deleteKeyedAndUnpark =
                "WITH d AS (DELETE FROM "
                        + table
                        + ofOneClaim
                        + " RETURNING id, receipt, msg_key),"
                        + " u AS (UPDATE "
                        + table
                        + " SET parked = FALSE WHERE id IN (SELECT w.id FROM"
                        + " (SELECT DISTINCT msg_key FROM d WHERE msg_key IS NOT NULL) k"
                        + firstParked
                        + " WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.id = w.id)))"
                        + " SELECT id, receipt, msg_key FROM d";
        this.unpark =
                "UPDATE "
                        + table
                        + " SET parked = FALSE WHERE id IN (SELECT w.id FROM"
                        + " unnest(CAST(:keys AS varchar[])) AS k(msg_key)"
                        + firstParked
                        + ")";
        this.deleteDead =
                "DELETE FROM "
                        + table
                        + " WHERE id = ANY(:ids) AND dead_at IS NOT NULL RETURNING id, msg_key";
        String leases =
                " FROM unnest(CAST(:ids AS varchar[]), CAST(:tokens AS varchar[])) AS r(id, receipt)"
                        + " WHERE t.id = r.id AND t.receipt = r.receipt AND t.lease_owner = :owner"
                        + " AND t.dead_at IS NULL RETURNING r.id, r.receipt";
        this.extend = "UPDATE " + table + " AS t SET available_at = :until" + leases;
        this.abandon =
                "UPDATE "
                        + table
                        + " AS t SET available_at = t.enqueued_at,"
                        + " attempts = GREATEST(t.attempts - 1, 0), lease_owner = NULL, receipt = NULL"
                        + leases;
    }

    @Override
    String insertOne() {
        return insert + " ON CONFLICT (id) DO NOTHING";
    }

    @Override
    Object timeValue(Instant value) {
        return OffsetDateTime.ofInstant(value, ZoneOffset.UTC);
    }

    @Override
    Instant getTime(ResultSet rs, String column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    /**
     * PostgreSQL's default level is READ COMMITTED, so transactions run as the pool hands them out
     * (asking for a level costs round trips on every call); a claim that finds itself at another
     * level rolls back and every transaction from then on asks for READ COMMITTED.
     */
    @Override
    <T> T inTransaction(Handle h, HandleCallback<T, RuntimeException> work) {
        if (!askForReadCommitted) {
            try {
                return h.inTransaction(work);
            } catch (NotReadCommitted e) {
                askForReadCommitted = true;
            }
        }
        return h.inTransaction(TransactionIsolationLevel.READ_COMMITTED, work);
    }

    @Override
    void lockClaims(Handle h) {
        String level =
                h.createQuery(lock)
                        .bind("class", LOCK_CLASS)
                        .bind("key", lockKey)
                        .mapTo(String.class)
                        .one();
        if (!READ_COMMITTED.equals(level)) {
            throw new NotReadCommitted();
        }
    }

    @Override
    List<Candidate> lockCandidates(Handle h, Instant now, int limit) {
        return candidates(
                h.createQuery(candidates).bind("now", time(now)).bind("limit", limit), null);
    }

    @Override
    List<StoredRow> lease(Handle h, List<Candidate> taken, LeaseTerms terms) {
        List<StoredRow> rows =
                h.createQuery(lease)
                        .bind("until", time(terms.until()))
                        .bind("owner", terms.owner())
                        .bind("token", terms.token())
                        .bindArray("ids", String.class, ids(taken))
                        .map((rs, ctx) -> StoredRow.read(rs, this))
                        .list();
        return inOrder(taken, rows);
    }

    @Override
    void park(Handle h, List<String> ids) {
        h.createUpdate(park).bindArray("ids", String.class, ids).execute();
    }

    @Override
    Removed<Receipt.Lease> deleteLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed) {
        return deleteByToken(h, keyed ? deleteKeyed : deleteUnkeyed, owner, receipts);
    }

    /** One statement per claim token deletes the leases and unparks their keys. */
    @Override
    Set<Receipt.Lease> deleteLeasesAndUnpark(Handle h, String owner, List<Receipt> chunk) {
        return deleteByToken(h, deleteKeyedAndUnpark, owner, chunk).removed();
    }

    /** Runs a deletion once per claim token (a relay's batch is one claim: one statement). */
    private static Removed<Receipt.Lease> deleteByToken(
            Handle h, String sql, String owner, List<Receipt> receipts) {
        Set<Receipt.Lease> leases = new HashSet<>();
        Set<String> keys = new HashSet<>();
        for (Map.Entry<String, List<String>> claim : byToken(receipts).entrySet()) {
            Removed<Receipt.Lease> r =
                    removedLeases(
                            h.createQuery(sql)
                                    .bind("owner", owner)
                                    .bind("token", claim.getKey())
                                    .bindArray("ids", String.class, claim.getValue()));
            leases.addAll(r.removed());
            keys.addAll(r.keys());
        }
        return new Removed<>(leases, keys);
    }

    @Override
    Removed<String> deleteDead(Handle h, Collection<String> ids) {
        return removedIds(
                h.createQuery(deleteDead).bindArray("ids", String.class, new ArrayList<>(ids)));
    }

    @Override
    Set<Receipt.Lease> extend(Db db, String owner, List<Receipt> receipts, Instant until) {
        return db.statement(
                "extend",
                h ->
                        leases(
                                bindPairs(h.createQuery(extend), owner, receipts)
                                        .bind("until", time(until))));
    }

    @Override
    Set<Receipt.Lease> abandon(Db db, String owner, List<Receipt> receipts) {
        return db.statement(
                "abandon", h -> leases(bindPairs(h.createQuery(abandon), owner, receipts)));
    }

    @Override
    void unpark(Handle h, Collection<String> keys) {
        if (!keys.isEmpty()) {
            h.createUpdate(unpark).bindArray("keys", String.class, new ArrayList<>(keys)).execute();
        }
    }

    private static org.jdbi.v3.core.statement.Query bindPairs(
            org.jdbi.v3.core.statement.Query query, String owner, List<Receipt> receipts) {
        List<String> ids = new ArrayList<>(receipts.size());
        List<String> tokens = new ArrayList<>(receipts.size());
        for (Receipt r : receipts) {
            ids.add(r.id());
            tokens.add(r.token());
        }
        return query.bind("owner", owner)
                .bindArray("ids", String.class, ids)
                .bindArray("tokens", String.class, tokens);
    }

    /** The ids of each claim token, in the order the tokens first appear. */
    private static Map<String, List<String>> byToken(List<Receipt> receipts) {
        Map<String, List<String>> ids = new LinkedHashMap<>();
        for (Receipt r : receipts) {
            ids.computeIfAbsent(r.token(), t -> new ArrayList<>()).add(r.id());
        }
        return ids;
    }

    /** Thrown inside a transaction that does not run at READ COMMITTED; it rolls back. */
    private static final class NotReadCommitted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotReadCommitted() {
            super("not READ COMMITTED", null, false, false);
        }
    }
}
