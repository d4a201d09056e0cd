package io.outbox4j.store.jdbi;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jspecify.annotations.Nullable;

/**
 * H2 2.x: the bucket locks of parking and unparking are the rows of the bucket-owner table. H2
 * gives up walking the index in order for a {@code SELECT … FOR UPDATE} with {@code ORDER BY …
 * LIMIT} (it reads, sorts and locks every match), so a claim reads its page without locks and then
 * locks just those rows by primary key, keeping the ones still claimable. Changed rows come back
 * through data change delta tables ({@code FINAL TABLE}, {@code OLD TABLE}). Times are UTC
 * wall-clock values in {@code TIMESTAMP(6)}.
 */
final class H2Dialect extends SqlDialect {
    final String candidates;
    final String candidatesOwned;
    final String lockClaimable;
    final String lease;
    final String unparkOneKey;
    final String extend;
    final String abandon;

    H2Dialect(String tableName, boolean deadLettersBlock) {
        // H2 keeps an index's order only for an ORDER BY that names its columns from the first one
        // on, and sorts NULLs first unless told otherwise: dead rows (no available_at) and live
        // rows (no dead_at) would be read at the start of the claim and dead-letter ranges.
        super(
                tableName,
                '"',
                deadLettersBlock,
                new Orders(
                        "c.parked, c.available_at NULLS LAST, c.seq",
                        "p.msg_key, p.seq DESC",
                        "dead_at NULLS LAST, seq"),
                // UTC from the session's local time and zone offset: H2 casts a timestamp with
                // time zone to the session's zone, whatever AT TIME ZONE said
                "DATEADD(MINUTE, -(EXTRACT(TIMEZONE_HOUR FROM CURRENT_TIMESTAMP(6)) * 60"
                        + " + EXTRACT(TIMEZONE_MINUTE FROM CURRENT_TIMESTAMP(6))),"
                        + " LOCALTIMESTAMP(6))");
        String select =
                "SELECT c.id, c.seq, c.msg_key, "
                        + predecessor
                        + " AS prev_seq FROM "
                        + table
                        + " c";
        this.candidates = select + claimable;
        this.candidatesOwned = select + claimableOwned;
        this.lockClaimable =
                "SELECT id FROM "
                        + table
                        + " WHERE id IN (<ids>) AND dead_at IS NULL AND parked = FALSE"
                        + " AND available_at <= :now FOR UPDATE";
        this.lease =
                "SELECT "
                        + MESSAGE_COLUMNS
                        + " FROM FINAL TABLE (UPDATE "
                        + table
                        + " SET available_at = :until, lease_owner = :owner, receipt = :token,"
                        + " attempts = attempts + 1 WHERE id IN (<ids>))";
        this.unparkOneKey =
                "UPDATE "
                        + table
                        + " SET parked = FALSE WHERE id IN (SELECT id FROM "
                        + table
                        + " WHERE parked = TRUE AND msg_key = :key ORDER BY parked, msg_key, seq"
                        + " LIMIT :n)";
        this.extend =
                "SELECT id, receipt FROM FINAL TABLE (UPDATE "
                        + table
                        + " SET available_at = :until"
                        + LEASES
                        + ")";
        this.abandon =
                "SELECT id, receipt FROM OLD TABLE (UPDATE "
                        + table
                        + " SET available_at = enqueued_at, attempts = GREATEST(attempts - 1, 0),"
                        + " lease_owner = NULL, receipt = NULL"
                        + LEASES
                        + ")";
    }

    @Override
    String insertMembershipLockRow(String lockTable) {
        return "MERGE INTO " + lockTable + " (name) KEY (name) VALUES ('members')";
    }

    /**
     * Reads the page, then locks its rows by primary key: a row another writer (a late release or
     * extension) holds is waited for and dropped if it is no longer claimable.
     */
    @Override
    List<Candidate> lockCandidates(
            Handle h, Instant now, int limit, @Nullable List<Integer> owned, String owner) {
        org.jdbi.v3.core.statement.Query query =
                h.createQuery(owned == null ? candidates : candidatesOwned);
        if (owned != null) {
            query.bindList("owned", owned);
        }
        List<Candidate> page = candidates(query.bind("now", time(now)).bind("limit", limit));
        if (page.isEmpty()) {
            return page;
        }
        Set<String> locked =
                new HashSet<>(
                        h.createQuery(lockClaimable)
                                .bindList("ids", ids(page))
                                .bind("now", time(now))
                                .mapTo(String.class)
                                .list());
        if (locked.size() == page.size()) {
            return page;
        }
        List<Candidate> claimable = new ArrayList<>(locked.size());
        for (Candidate c : page) {
            if (locked.contains(c.id())) {
                claimable.add(c);
            }
        }
        return claimable;
    }

    @Override
    List<StoredRow> lease(Handle h, List<Candidate> taken, LeaseTerms terms) {
        List<StoredRow> rows =
                terms.bindTo(h.createQuery(lease), this)
                        .bindList("ids", ids(taken))
                        .map((rs, ctx) -> StoredRow.read(rs, this))
                        .list();
        return inOrder(taken, rows);
    }

    @Override
    Removed<Receipt.Lease> deleteLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed) {
        return removedLeases(
                bindLeases(
                        h.createQuery(
                                "SELECT id, receipt, msg_key FROM OLD TABLE (DELETE FROM "
                                        + table
                                        + LEASES
                                        + (keyed ? "" : " AND msg_key IS NULL")
                                        + ")"),
                        owner,
                        receipts));
    }

    @Override
    Removed<String> deleteDead(Handle h, Collection<String> ids) {
        return removedIds(
                h.createQuery(
                                "SELECT id, msg_key FROM OLD TABLE (DELETE FROM "
                                        + table
                                        + " WHERE id IN (<ids>) AND dead_at IS NOT NULL)")
                        .bindList("ids", new ArrayList<>(ids)));
    }

    @Override
    Set<Receipt.Lease> extend(Db db, String owner, List<Receipt> receipts, Instant until) {
        return db.statement(
                "extend",
                h ->
                        leases(
                                bindLeases(h.createQuery(extend), owner, receipts)
                                        .bind("until", time(until))));
    }

    @Override
    Set<Receipt.Lease> abandon(Db db, String owner, List<Receipt> receipts) {
        return db.statement(
                "abandon", h -> leases(bindLeases(h.createQuery(abandon), owner, receipts)));
    }

    @Override
    void unpark(Handle h, Map<String, Integer> removed) {
        unparkEach(h, removed, unparkOneKey);
    }
}
