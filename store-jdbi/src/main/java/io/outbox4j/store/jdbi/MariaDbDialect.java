package io.outbox4j.store.jdbi;

import java.time.Instant;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jspecify.annotations.Nullable;

/**
 * MariaDB 10.6+: the bucket locks of parking and unparking are the rows of the bucket-owner table;
 * candidates are found by a read that takes no locks, then locked by primary key with their
 * messages ({@code FOR UPDATE SKIP LOCKED}, because an {@code UPDATE} cannot return rows); removals
 * lock their rows by primary key, then delete them by id. Times are UTC wall-clock values in {@code
 * DATETIME(6)}, never converted by a session time zone.
 *
 * <p><b>No locking read meets a row that is not committed.</b> A locking read that reaches a row
 * another transaction inserted and has not committed, even one that skips it, turns that
 * transaction's implicit lock on the row into an explicit lock. InnoDB hands an explicit lock of a
 * transaction at {@code REPEATABLE READ} (MariaDB's and MySQL's default) on to the neighbouring gap
 * when the page splits or merges or a neighbour is purged, and other writers' inserts into that gap
 * then wait for it: a claim scanning the claim index with {@code FOR UPDATE SKIP LOCKED} made every
 * application transaction that enqueued and stayed open block other enqueuing transactions (the
 * held-transaction drill in fault-tests). So the claim reads its candidates' ids without locks (a
 * consistent read sees committed rows only) and locks those ids through the primary key, checking
 * again that each is claimable; unparking reads its rows without locks too; and every locking
 * statement names its rows by id, reaching each by one primary-key lookup ({@link #bindKeys}).
 *
 * <p>The predecessors of a page's keyed candidates are found by a second statement whose probes are
 * bound to constants: MariaDB runs a correlated probe as a {@code ref} lookup on {@code msg_key}
 * and walks the key from its far end (a key's head would read its whole backlog), while a probe
 * bound to constants is one range step on {@code (msg_key, seq)}.
 */
class MariaDbDialect extends SqlDialect {
    /**
     * The most pages of ids one read of candidates goes through while their rows are locked by
     * other claimers (each page continues after the last); a claim that still has fewer rows than
     * asked then leaves the rest to its next claim.
     */
    static final int MAX_ID_PAGES = 8;

    /** Ids of claimable rows in claim order, read without locks: {@code id, available_at, seq}. */
    final String candidates;

    final String candidatesOwned;
    final String candidatesAfter;
    final String candidatesOwnedAfter;

    /**
     * Locks the claimable rows among {@code <ids>} through the primary key, skipping rows other
     * claimers hold, and reads their messages.
     */
    final String lockCandidateRows;

    final String lease;
    final String abandonLocked;
    final String extendUpdate;
    final String extendedLeases;
    final String lockLeases;
    final String lockUnkeyedLeases;
    final String deleteIds;
    final String lockDead;
    final String parkIds;

    /**
     * The first {@code :n} parked rows of key {@code :key} in enqueue order, read without locks
     * (the caller holds the key's bucket lock, so no one parks or unparks them meanwhile).
     */
    final String unparkOneKey;

    final String unparkIds;

    /**
     * Rows named by id are reached through the primary key only, one {@code eq_ref} lookup per id:
     * the ids form a derived table of constants ({@code <keys>}, see {@link #bindKeys}) joined
     * first ({@code STRAIGHT_JOIN}) to the outbox table on its primary key. An {@code id IN (…)}
     * list does not hold the optimizer to that, not even with {@code FORCE INDEX (PRIMARY)}: when
     * the list names a good part of a nearly empty outbox it scans the whole primary key, and a
     * locking scan waits for (or, skipping, makes explicit the locks of) every row an open
     * application transaction inserted. Completions then stalled until that transaction ended (the
     * held-transaction drill in fault-tests).
     */
    private static final String JOIN_KEYS = "<keys> STRAIGHT_JOIN ";

    private static final String ON_KEYS = " c ON c.id = k.k_id";

    MariaDbDialect(String tableName, boolean deadLettersBlock) {
        super(tableName, '`', deadLettersBlock, Orders.PLAIN, "UTC_TIMESTAMP(6)");
        String ids = "SELECT c.id, c.available_at, c.seq FROM " + table + " c WHERE " + CLAIMABLE;
        String after =
                " AND (c.available_at > :afterAt OR (c.available_at = :afterAt AND c.seq > :afterSeq))";
        String order = " ORDER BY " + claimOrder + " LIMIT :limit";
        this.candidates = ids + order;
        this.candidatesOwned = ids + OWNED + order;
        this.candidatesAfter = ids + after + order;
        this.candidatesOwnedAfter = ids + OWNED + after + order;
        String byKeys = " FROM " + JOIN_KEYS + table + ON_KEYS;
        String updateByKeys = "UPDATE " + JOIN_KEYS + table + ON_KEYS;
        String leasesByKeys =
                byKeys
                        + " WHERE c.receipt = k.k_receipt AND c.lease_owner = :owner"
                        + " AND c.dead_at IS NULL";
        this.lockCandidateRows =
                "SELECT "
                        + MESSAGE_COLUMNS
                        + byKeys
                        + " WHERE "
                        + CLAIMABLE
                        + " FOR UPDATE SKIP LOCKED";
        this.lease =
                updateByKeys
                        + " SET c.available_at = :until, c.lease_owner = :owner, c.receipt = :token,"
                        + " c.attempts = c.attempts + 1";
        this.lockLeases = "SELECT c.id, c.receipt, c.msg_key" + leasesByKeys + " FOR UPDATE";
        this.lockUnkeyedLeases =
                "SELECT c.id, c.receipt, c.msg_key"
                        + leasesByKeys
                        + " AND c.msg_key IS NULL FOR UPDATE";
        this.deleteIds = "DELETE c" + byKeys;
        this.lockDead =
                "SELECT c.id, c.msg_key" + byKeys + " WHERE c.dead_at IS NOT NULL FOR UPDATE";
        this.abandonLocked =
                updateByKeys
                        + " SET c.available_at = c.enqueued_at,"
                        + " c.attempts = GREATEST(c.attempts - 1, 0),"
                        + " c.lease_owner = NULL, c.receipt = NULL";
        this.parkIds = updateByKeys + " SET c.parked = TRUE";
        this.unparkOneKey =
                "SELECT id FROM "
                        + table
                        + " WHERE parked = TRUE AND msg_key = :key"
                        + " ORDER BY seq LIMIT :n"; // index order (parked, msg_key, seq), no
        // filesort
        this.unparkIds = updateByKeys + " SET c.parked = FALSE WHERE c.parked = TRUE";
        this.extendUpdate =
                updateByKeys
                        + " SET c.available_at = :until WHERE c.receipt = k.k_receipt"
                        + " AND c.lease_owner = :owner AND c.dead_at IS NULL";
        this.extendedLeases =
                "SELECT id, receipt FROM " + table + LEASES + " AND available_at = :until";
    }

    /**
     * Defines {@code <keys>} as the derived table {@code (SELECT :k0 AS k_id UNION ALL SELECT :k1
     * …) k} of these ids and binds them.
     */
    static <S extends SqlStatement<S>> S bindKeys(S statement, Collection<String> ids) {
        StringBuilder keys = new StringBuilder("(");
        int i = 0;
        for (String id : ids) {
            keys.append(i == 0 ? "SELECT :k0 AS k_id" : " UNION ALL SELECT :k" + i);
            statement.bind("k" + i, id);
            i++;
        }
        return statement.define("keys", keys.append(") k").toString());
    }

    /**
     * Defines {@code <keys>} as the derived table {@code (SELECT :k0 AS k_id, :r0 AS k_receipt
     * UNION ALL …) k} of these receipts' ids and tokens and binds them, with {@code :owner}.
     */
    static <S extends SqlStatement<S>> S bindLeaseKeys(
            S statement, String owner, List<Receipt> receipts) {
        StringBuilder keys = new StringBuilder("(");
        for (int i = 0; i < receipts.size(); i++) {
            keys.append(
                    i == 0
                            ? "SELECT :k0 AS k_id, :r0 AS k_receipt"
                            : " UNION ALL SELECT :k" + i + ", :r" + i);
            statement.bind("k" + i, receipts.get(i).id()).bind("r" + i, receipts.get(i).token());
        }
        return statement.bind("owner", owner).define("keys", keys.append(") k").toString());
    }

    @Override
    String insertMembershipLockRow(String lockTable) {
        return "INSERT IGNORE INTO " + lockTable + " (name) VALUES ('members')";
    }

    /**
     * Reads pages of claimable ids without locks and locks their rows by primary key, until {@code
     * limit} rows are locked, the claimable rows run out, or {@link #MAX_ID_PAGES} pages were read
     * (rows other claimers hold are skipped; the next page continues after the last id read). The
     * rows come back in the order the ids were read.
     */
    @Override
    List<Candidate> lockCandidates(
            Handle h, Instant now, int limit, @Nullable List<Integer> owned, String owner) {
        List<StoredRow> rows = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        LocalDateTime afterAt = null;
        long afterSeq = 0;
        for (int pages = 0; pages < MAX_ID_PAGES && rows.size() < limit; pages++) {
            int want = pages == 0 ? limit : limit - rows.size();
            Query read =
                    h.createQuery(
                            afterAt == null
                                    ? (owned == null ? candidates : candidatesOwned)
                                    : (owned == null ? candidatesAfter : candidatesOwnedAfter));
            if (owned != null) {
                read.bindList("owned", owned);
            }
            if (afterAt != null) {
                read.bind("afterAt", afterAt).bind("afterSeq", afterSeq);
            }
            List<String> ids = new ArrayList<>(want);
            List<LocalDateTime> ats = new ArrayList<>(want);
            List<Long> seqs = new ArrayList<>(want);
            read.bind("now", time(now))
                    .bind("limit", want)
                    .map(
                            (rs, ctx) -> {
                                ids.add(rs.getString(1));
                                ats.add(rs.getObject(2, LocalDateTime.class));
                                seqs.add(rs.getLong(3));
                                return null;
                            })
                    .list();
            if (ids.isEmpty()) {
                break;
            }
            Map<String, StoredRow> locked = new HashMap<>();
            bindKeys(h.createQuery(lockCandidateRows), ids)
                    .bind("now", time(now))
                    .map((rs, ctx) -> StoredRow.read(rs, this))
                    .forEach(r -> locked.put(r.id, r));
            for (String id : ids) {
                StoredRow r = locked.get(id);
                // a row another claimer released or gave back between two pages may come again
                if (r != null && seen.add(id)) {
                    rows.add(r);
                }
            }
            if (ids.size() < want) {
                break; // the claimable rows ran out
            }
            afterAt = ats.get(ats.size() - 1);
            afterSeq = seqs.get(seqs.size() - 1);
        }
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
            bindKeys(h.createUpdate(parkIds), still.keySet()).execute();
        }
    }

    @Override
    List<StoredRow> lease(Handle h, List<Candidate> taken, LeaseTerms terms) {
        int moved = terms.bindTo(bindKeys(h.createUpdate(lease), ids(taken)), this).execute();
        List<StoredRow> rows = new ArrayList<>(taken.size());
        if (moved == taken.size()) {
            for (Candidate c : taken) {
                rows.add(
                        Objects.requireNonNull(c.row(), "a MariaDB candidate carries its row")
                                .withOneMoreAttempt());
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
            bindKeys(h.createUpdate(deleteIds), leaseIds(locked.removed())).execute();
        }
        return locked;
    }

    @Override
    Removed<String> deleteDead(Handle h, Collection<String> ids) {
        Removed<String> locked = removedIds(bindKeys(h.createQuery(lockDead), ids));
        if (!locked.removed().isEmpty()) {
            bindKeys(h.createUpdate(deleteIds), locked.removed()).execute();
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
                                bindLeaseKeys(h.createUpdate(extendUpdate), owner, receipts)
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
                        bindKeys(h.createUpdate(abandonLocked), leaseIds(locked)).execute();
                    }
                    return locked;
                });
    }

    /**
     * Reads the rows to unpark without locks, key by key in one statement of parts bound to
     * constants, then unparks them by primary key: an {@code UPDATE … WHERE msg_key = …} could go
     * through the key index and wait for an open transaction's rows of that key.
     */
    @Override
    void unpark(Handle h, Map<String, Integer> removed) {
        List<Map.Entry<String, Integer>> keys = new ArrayList<>(removed.entrySet());
        for (int from = 0; from < keys.size(); from += UNPARK_KEYS_PER_READ) {
            List<Map.Entry<String, Integer>> part =
                    keys.subList(from, Math.min(keys.size(), from + UNPARK_KEYS_PER_READ));
            StringBuilder sql = new StringBuilder();
            for (int i = 0; i < part.size(); i++) {
                sql.append(i == 0 ? "(" : " UNION ALL (")
                        .append(unparkOneKey.replace(":key", ":key" + i).replace(":n", ":n" + i))
                        .append(')');
            }
            Query read = h.createQuery(sql.toString());
            for (int i = 0; i < part.size(); i++) {
                read.bind("key" + i, part.get(i).getKey())
                        .bind("n" + i, unparkCount(part.get(i).getValue()));
            }
            List<String> ids = read.mapTo(String.class).list();
            if (!ids.isEmpty()) {
                bindKeys(h.createUpdate(unparkIds), ids).execute();
            }
        }
    }

    /** The most keys one read of {@link #unpark} covers. */
    static final int UNPARK_KEYS_PER_READ = 100;

    /** Locks the named leases (with {@code keyed} false only rows without a key). */
    Removed<Receipt.Lease> lockLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed) {
        return removedLeases(
                bindLeaseKeys(
                        h.createQuery(keyed ? lockLeases : lockUnkeyedLeases), owner, receipts));
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
