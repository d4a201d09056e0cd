package io.outbox4j.store.jdbi;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;

/**
 * MariaDB 10.6+: the bucket locks of parking and unparking are the rows of the bucket-owner table;
 * candidates are read with their messages and locked in one statement ({@code FOR UPDATE SKIP
 * LOCKED}) because an {@code UPDATE} cannot return rows; removals lock their rows by primary key,
 * then delete them by id. Times are UTC wall-clock values in {@code DATETIME(6)}, never converted
 * by a session time zone.
 *
 * <p>The predecessors of a page's keyed candidates are found by a second statement whose probes are
 * bound to constants: MariaDB runs a correlated probe as a {@code ref} lookup on {@code msg_key}
 * and walks the key from its far end (a key's head would read its whole backlog), while a probe
 * bound to constants is one range step on {@code (msg_key, seq)}.
 */
class MariaDbDialect extends SqlDialect {
    final String candidates;
    final String candidatesOwned;
    final String lease;
    final String abandonLocked;
    final String unparkOneKey;
    final String extendUpdate;
    final String extendedLeases;
    final String lockLeases;
    final String lockUnkeyedLeases;
    private final String deleteIds;
    private final String lockDead;

    /**
     * Rows named by id are reached through the primary key only. In a nearly empty outbox (fresh
     * statistics) the optimizer would rather scan the table, and a locking scan waits for every row
     * an open application transaction inserted: completions then stall until that transaction ends,
     * and the locks they hold meanwhile stall other writers (the held-transaction drill in
     * fault-tests). A single-table {@code DELETE} takes no index hint, so a removal locks its rows
     * with a hinted {@code SELECT … FOR UPDATE} and deletes them by id with a hinted multi-table
     * {@code DELETE}.
     */
    private static final String BY_ID = " FORCE INDEX (PRIMARY)";

    MariaDbDialect(String tableName, boolean deadLettersBlock) {
        super(tableName, '`', deadLettersBlock, Orders.PLAIN, "UTC_TIMESTAMP(6)");
        String select = "SELECT " + MESSAGE_COLUMNS + " FROM " + table + " c";
        this.candidates = select + claimable + " FOR UPDATE SKIP LOCKED";
        this.candidatesOwned = select + claimableOwned + " FOR UPDATE SKIP LOCKED";
        this.lease =
                "UPDATE "
                        + table
                        + " SET available_at = :until, lease_owner = :owner, receipt = :token,"
                        + " attempts = attempts + 1 WHERE id IN (<ids>)";
        this.lockLeases =
                "SELECT id, receipt, msg_key FROM " + table + BY_ID + LEASES + " FOR UPDATE";
        this.lockUnkeyedLeases =
                "SELECT id, receipt, msg_key FROM "
                        + table
                        + BY_ID
                        + LEASES
                        + " AND msg_key IS NULL FOR UPDATE";
        this.deleteIds = "DELETE c FROM " + table + " c" + BY_ID + " WHERE c.id IN (<ids>)";
        this.lockDead =
                "SELECT id, msg_key FROM "
                        + table
                        + BY_ID
                        + " WHERE id IN (<ids>) AND dead_at IS NOT NULL FOR UPDATE";
        this.abandonLocked =
                "UPDATE "
                        + table
                        + " SET available_at = enqueued_at, attempts = GREATEST(attempts - 1, 0),"
                        + " lease_owner = NULL, receipt = NULL WHERE id IN (<ids>)";
        this.unparkOneKey =
                "UPDATE "
                        + table
                        + " SET parked = FALSE WHERE parked = TRUE AND msg_key = :key"
                        + " ORDER BY parked, msg_key, seq LIMIT :n"; // index order, no filesort
        this.extendUpdate = "UPDATE " + table + " SET available_at = :until" + LEASES;
        this.extendedLeases =
                "SELECT id, receipt FROM " + table + LEASES + " AND available_at = :until";
    }

    @Override
    Object timeValue(Instant value) {
        return LocalDateTime.ofInstant(value, ZoneOffset.UTC);
    }

    @Override
    Instant getTime(ResultSet rs, int column) throws SQLException {
        LocalDateTime t = rs.getObject(column, LocalDateTime.class);
        return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }

    @Override
    String insertMembershipLockRow(String lockTable) {
        return "INSERT IGNORE INTO " + lockTable + " (name) VALUES ('members')";
    }

    @Override
    void lockBuckets(Handle h, Collection<Integer> buckets) {
        lockBucketRows(h, buckets);
    }

    @Override
    Set<Integer> tryLockBuckets(Handle h, Collection<Integer> buckets) {
        return tryLockBucketRows(h, buckets);
    }

    @Override
    List<Candidate> lockCandidates(
            Handle h, Instant now, int limit, List<Integer> owned, String owner) {
        Query page = h.createQuery(owned == null ? candidates : candidatesOwned);
        if (owned != null) {
            page.bindList("owned", owned);
        }
        List<StoredRow> rows =
                page.bind("now", time(now))
                        .bind("limit", limit)
                        .map((rs, ctx) -> StoredRow.read(rs, this))
                        .list();
        Map<String, Long> prev = predecessors(h, rows);
        List<Candidate> candidates = new ArrayList<>(rows.size());
        for (StoredRow r : rows) {
            candidates.add(new Candidate(r.id, r.seq, r.key, prev.get(r.id), false, r));
        }
        return candidates;
    }

    /**
     * The latest earlier row of each keyed row's key, by id (absent when none): one statement of
     * probes bound to constants, {@code SELECT :id0 AS id, (SELECT p.seq … ORDER BY p.seq DESC
     * LIMIT 1) AS prev_seq UNION ALL …}.
     */
    Map<String, Long> predecessors(Handle h, List<StoredRow> rows) {
        StringBuilder sql = new StringBuilder();
        List<StoredRow> keyed = new ArrayList<>();
        for (StoredRow r : rows) {
            if (r.key != null) {
                int i = keyed.size();
                sql.append(i == 0 ? "" : " UNION ALL ")
                        .append("SELECT :id")
                        .append(i)
                        .append(" AS id, (SELECT p.seq FROM ")
                        .append(table)
                        .append(" p WHERE p.msg_key = :key")
                        .append(i)
                        .append(" AND p.seq < :seq")
                        .append(i)
                        .append(deadLettersBlock ? "" : " AND p.dead_at IS NULL")
                        .append(" ORDER BY p.seq DESC LIMIT 1) AS prev_seq");
                keyed.add(r);
            }
        }
        Map<String, Long> prev = new HashMap<>();
        if (keyed.isEmpty()) {
            return prev;
        }
        Query probes = h.createQuery(sql.toString());
        for (int i = 0; i < keyed.size(); i++) {
            StoredRow r = keyed.get(i);
            probes.bind("id" + i, r.id).bind("key" + i, r.key).bind("seq" + i, r.seq);
        }
        probes.map(
                        (rs, ctx) -> {
                            long seq = rs.getLong("prev_seq");
                            if (!rs.wasNull()) {
                                prev.put(rs.getString("id"), seq);
                            }
                            return seq;
                        })
                .list();
        return prev;
    }

    /**
     * MariaDB and MySQL refuse a subquery on the table an {@code UPDATE} changes: the rows'
     * predecessors are probed again (a statement after the bucket locks), then the rows that still
     * have one are parked by id.
     */
    @Override
    void parkIfStillBlocked(Handle h, List<Candidate> rows) {
        List<StoredRow> probe = new ArrayList<>(rows.size());
        for (Candidate c : rows) {
            probe.add(c.row());
        }
        Map<String, Long> still = predecessors(h, probe);
        if (!still.isEmpty()) {
            h.createUpdate("UPDATE " + table + BY_ID + " SET parked = TRUE WHERE id IN (<ids>)")
                    .bindList("ids", new ArrayList<>(still.keySet()))
                    .execute();
        }
    }

    @Override
    List<StoredRow> lease(Handle h, List<Candidate> taken, LeaseTerms terms) {
        int moved =
                h.createUpdate(lease)
                        .bind("until", time(terms.until()))
                        .bind("owner", terms.owner())
                        .bind("token", terms.token())
                        .bindList("ids", ids(taken))
                        .execute();
        List<StoredRow> rows = new ArrayList<>(taken.size());
        if (moved == taken.size()) {
            for (Candidate c : taken) {
                rows.add(c.row().withOneMoreAttempt());
            }
        }
        return inOrder(taken, rows);
    }

    /** A transaction even without a key: the removal is two statements. */
    @Override
    Set<Receipt.Lease> completeUnkeyed(Db db, String owner, List<Receipt> chunk) {
        return db.transaction("complete", h -> deleteLeases(h, owner, chunk, false).removed());
    }

    @Override
    Removed<Receipt.Lease> deleteLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed) {
        Removed<Receipt.Lease> locked = lockLeases(h, owner, receipts, keyed);
        if (!locked.removed().isEmpty()) {
            h.createUpdate(deleteIds).bindList("ids", leaseIds(locked.removed())).execute();
        }
        return locked;
    }

    @Override
    Removed<String> deleteDead(Handle h, Collection<String> ids) {
        Removed<String> locked =
                removedIds(h.createQuery(lockDead).bindList("ids", new ArrayList<>(ids)));
        if (!locked.removed().isEmpty()) {
            h.createUpdate(deleteIds).bindList("ids", new ArrayList<>(locked.removed())).execute();
        }
        return locked;
    }

    /**
     * One {@code UPDATE}; only when it changed fewer rows than asked does a second statement read
     * which leases it moved.
     */
    @Override
    Set<Receipt.Lease> extend(Db db, String owner, List<Receipt> receipts, Instant until) {
        int moved =
                db.statement(
                        "extend",
                        h ->
                                bindLeases(h.createUpdate(extendUpdate), owner, receipts)
                                        .bind("until", time(until))
                                        .execute());
        if (moved == receipts.size()) {
            Set<Receipt.Lease> all = new HashSet<>();
            for (Receipt r : receipts) {
                all.add(r.lease());
            }
            return all;
        }
        return db.statement(
                "extend",
                h ->
                        leases(
                                bindLeases(h.createQuery(extendedLeases), owner, receipts)
                                        .bind("until", time(until))));
    }

    /** Locks the named leases, then gives them back: an {@code UPDATE} cannot say which it hit. */
    @Override
    Set<Receipt.Lease> abandon(Db db, String owner, List<Receipt> receipts) {
        return db.transaction(
                "abandon",
                h -> {
                    Set<Receipt.Lease> locked = lockLeases(h, owner, receipts, true).removed();
                    if (!locked.isEmpty()) {
                        h.createUpdate(abandonLocked).bindList("ids", leaseIds(locked)).execute();
                    }
                    return locked;
                });
    }

    @Override
    void unpark(Handle h, Map<String, Integer> removed) {
        unparkEach(h, removed, unparkOneKey);
    }

    /** Locks the named leases (with {@code keyed} false only rows without a key). */
    Removed<Receipt.Lease> lockLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed) {
        return removedLeases(
                bindLeases(h.createQuery(keyed ? lockLeases : lockUnkeyedLeases), owner, receipts));
    }

    /** The ids of leases. */
    static List<String> leaseIds(Collection<Receipt.Lease> leases) {
        List<String> ids = new ArrayList<>(leases.size());
        for (Receipt.Lease lease : leases) {
            ids.add(lease.id());
        }
        return ids;
    }
}
