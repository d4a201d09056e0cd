package io.outbox4j.store.jdbi;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL 15+: the bucket locks of parking and unparking are transaction-scoped advisory locks
 * ({@code pg_advisory_xact_lock(outbox, bucket)}); candidates are read and locked in one statement
 * ({@code FOR UPDATE SKIP LOCKED}); leases, completions and unparking return what they changed
 * ({@code RETURNING}), and lists travel as one array parameter, so every statement text is the same
 * whatever the batch size and is planned once.
 *
 * <p>The two hot paths take one round trip, as a single statement did before per-key order: the
 * lock and the statement that needs it are sent together ({@code SELECT … pg_advisory_xact_lock(…);
 * WITH …}) and run as one implicit transaction, the second statement with a snapshot taken after
 * the lock was granted. A claim leases there every candidate that has no earlier message of its key
 * in the table; only when some candidate has one (a key with several messages due, or a blocked
 * key) does the claim go on in a transaction of its own that walks, leases and parks. A completion
 * of keyed messages deletes them and unparks their keys in that one statement.
 *
 * <p>Rows chosen inside a statement are updated through {@code id = ANY(ARRAY(subquery))}, never a
 * join or {@code IN (subquery)}: an outbox is often analysed while (nearly) empty, and with those
 * statistics the planner joined a claim's page to the whole table as a nested loop (1.4 s to lease
 * 500 rows of 20 000; unparking after a completion 5.4 s) until the next auto-analyze. The array
 * form is an index lookup by primary key whatever the statistics (22 and 38 ms).
 */
final class PostgresDialect extends SqlDialect {
    /**
     * Where {@link #claimFree}'s rows have the leased message: after c_id, c_seq, c_key, prev_seq,
     * prev_mine.
     */
    private static final int LEASED_COLUMNS = 6;

    /**
     * How long the server lets a claim transaction sit idle (its client silent) before it ends the
     * session: a frozen, paused or partitioned relay holds its page's rows and its buckets' locks
     * this long at most.
     */
    static final int IDLE_CUT_OFF_MILLIS = 2000;

    private static final String READ_COMMITTED = "read committed";

    /**
     * Makes the rest of the transaction plan without sequential scans of the outbox. Relays poll an
     * empty outbox as prepared statements, so PostgreSQL plans the claim once, generically, for an
     * empty table, and keeps that plan while a burst fills it (until the next analyze): it sorted
     * the whole burst and probed each row's predecessor with a scan of the table, so one claim over
     * 20 000 rows ran for 21 s holding the (then) claim lock (scale benchmark). Every statement of
     * the claim and completion transactions has an index made for it, so with real statistics this
     * changes nothing (measured: drain rates equal). Disabling nested loops too was tried and made
     * keyed completions twice as slow. JIT compilation is turned off too: a statement whose
     * estimate crosses {@code jit_above_cost} (as one that had to scan a small table with
     * sequential scans disabled did) was compiled on every execution, 0.9 s for a claim of 7 rows.
     *
     * <p>The statements that follow in the transaction also use the prepared statement's generic
     * plan ({@code plan_cache_mode}): with the default, PostgreSQL judged the generic plan of a
     * statement over {@code id = ANY(:ids)} dearer than a custom plan for the few ids of each call
     * and planned the claim and completion anew on almost every call (pg_stat_statements in the
     * latency benchmark: 778 plans in 990 calls of the completion), planning that cost the server
     * more than running them. With sequential scans disabled the generic plans are the index plans.
     */
    static final String INDEX_PLANS =
            "set_config('enable_seqscan', 'off', true) AS no_seqscan,"
                    + " set_config('jit', 'off', true) AS no_jit,"
                    + " set_config('plan_cache_mode', 'force_generic_plan', true) AS generic";

    /**
     * Makes a statement sent together with the lock do nothing unless it runs at READ COMMITTED (at
     * another level its snapshot would predate the lock).
     */
    private static final String AT_READ_COMMITTED =
            "current_setting('transaction_isolation') = '" + READ_COMMITTED + "'";

    /** The first key of every bucket lock of this outbox (the second is the bucket). */
    private final int lockKey;

    /** The claim's settings, returning the transaction's isolation level. */
    final String claimSettings;

    /** {@link #claimSettings} of a claim transaction of several round trips, with its cut-off. */
    final String beginClaim;

    /**
     * The locks of the buckets of the rows {@code :ids}, in ascending order, returning the
     * transaction's isolation level.
     */
    final String lockBucketsOfIds;

    final String candidates;
    final String candidatesOwned;
    final String lease;
    final String park;
    final String deleteUnkeyed;
    final String deleteKeyed;
    final String unpark;
    final String deleteDead;
    final String extend;
    final String abandon;

    /** Reads a page, leases the candidates nothing precedes, returns the page. */
    final String claimFree;

    /** {@link #claimFree} for a member: keyed rows only of its buckets, by the database's clock. */
    final String claimFreeOwned;

    /** Deletes keyed leases of one claim and unparks their keys. */
    final String completeKeyed;

    /**
     * {@link #claimSettings}, the locks of {@link #lockBucketsOfIds}, then {@link #completeKeyed},
     * in one round trip.
     */
    final String lockAndCompleteKeyed;

    // The hot paths, prepared on the connection without Jdbi's statement machinery (see Sql):
    private final Sql claimFreeSql;
    private final Sql claimFreeOwnedSql;
    private final Sql lockAndCompleteKeyedSql;
    private final Sql deleteUnkeyedSql;
    private final Sql deleteKeyedSql;
    private final Sql extendSql;
    private final Sql abandonSql;

    /**
     * Set once a transaction found itself not at READ COMMITTED (the server's or the pool's
     * default): from then on every transaction asks for it explicitly.
     */
    private volatile boolean askForReadCommitted;

    PostgresDialect(String tableName, boolean deadLettersBlock) {
        super(tableName, '"', deadLettersBlock, Orders.PLAIN, "clock_timestamp()");
        this.lockKey = ("outbox4j:" + tableName).hashCode();
        String level = "SELECT current_setting('transaction_isolation') AS level, " + INDEX_PLANS;
        this.claimSettings = level;
        this.beginClaim =
                level
                        + ", set_config('idle_in_transaction_session_timeout', '"
                        + IDLE_CUT_OFF_MILLIS
                        + "', true) AS idle_cut_off";
        String locks =
                "SELECT count(pg_advisory_xact_lock(:class, s.b)) FROM (SELECT DISTINCT bucket AS b"
                        + " FROM "
                        + table
                        + " WHERE id = ANY(:ids) AND bucket IS NOT NULL ORDER BY 1) s";
        this.lockBucketsOfIds = level + " FROM (" + locks + ") l";
        // The rows are locked first, the predecessors probed for those rows only: a probe in the
        // list of the locking select would run for every claimable row when the planner sorts
        // them (20 000 probes, each a scan of the table, with statistics that say it is empty).
        String memberCheck = " AND (c.msg_key IS NULL OR c.bucket IN (" + ownedBuckets + "))";
        String page = page(CLAIMABLE);
        this.candidates = page + " ORDER BY " + claimOrder;
        this.candidatesOwned = page(CLAIMABLE + OWNED) + " ORDER BY " + claimOrder;
        String leaseSet =
                " SET available_at = :until, lease_owner = :owner, receipt = :token,"
                        + " attempts = t.attempts + 1";
        String returning =
                " RETURNING t.id, t.seq, t.topic, t.msg_key, t.module, t.content_type, t.payload,"
                        + " t.headers, t.occurred_at, t.not_before, t.enqueued_at, t.attempts";
        this.lease = "UPDATE " + table + " AS t" + leaseSet + " WHERE t.id = ANY(:ids)" + returning;
        this.park =
                "UPDATE "
                        + table
                        + " AS x SET parked = TRUE WHERE x.id = ANY(:ids) AND "
                        + hasEarlierOfKey("x");
        String ofOneClaim =
                " WHERE lease_owner = :owner AND receipt = :token AND dead_at IS NULL"
                        + " AND id = ANY(:ids)";
        this.deleteUnkeyed =
                "DELETE FROM "
                        + table
                        + ofOneClaim
                        + " AND msg_key IS NULL RETURNING id, receipt, msg_key";
        this.deleteKeyed = "DELETE FROM " + table + ofOneClaim + " RETURNING id, receipt, msg_key";
        // the first k.n parked rows of key k.msg_key
        String firstParked =
                " CROSS JOIN LATERAL (SELECT x.id FROM "
                        + table
                        + " x WHERE x.msg_key = k.msg_key AND x.parked ORDER BY x.seq LIMIT k.n) w";
        this.unpark =
                "UPDATE "
                        + table
                        + " SET parked = FALSE WHERE id = ANY(ARRAY(SELECT w.id FROM"
                        + " unnest(CAST(:keys AS varchar[]), CAST(:counts AS integer[])) AS k(msg_key, n)"
                        + firstParked
                        + "))";
        this.deleteDead =
                "DELETE FROM "
                        + table
                        + " WHERE id = ANY(:ids) AND dead_at IS NOT NULL RETURNING id, msg_key";
        String leases =
                " FROM unnest(CAST(:ids AS varchar[]), CAST(:tokens AS varchar[])) AS r(id, receipt)"
                        + " WHERE t.id = ANY(CAST(:ids AS varchar[])) AND t.id = r.id"
                        + " AND t.receipt = r.receipt AND t.lease_owner = :owner"
                        + " AND t.dead_at IS NULL RETURNING r.id, r.receipt";
        this.extend = "UPDATE " + table + " AS t SET available_at = :until" + leases;
        this.abandon =
                "UPDATE "
                        + table
                        + " AS t SET available_at = t.enqueued_at,"
                        + " attempts = GREATEST(t.attempts - 1, 0), lease_owner = NULL, receipt = NULL"
                        + leases;
        this.claimFree = claimFree(page, leaseSet, returning);
        // A member's claim is timed by the database's clock: due-ness, expiry and the new leases'
        // end, whatever the claimer's clock says (docs/scale-out.md, "Clocks").
        this.claimFreeOwned =
                claimFree(page(CLAIMABLE + memberCheck), leaseSet, returning)
                        .replace(":now", "statement_timestamp()")
                        .replace(":until", "(statement_timestamp() + " + LEASE_MS + ")");
        this.completeKeyed =
                "WITH d AS (DELETE FROM "
                        + table
                        + ofOneClaim
                        + " AND "
                        + AT_READ_COMMITTED
                        + " RETURNING id, receipt, msg_key),"
                        + " u AS (UPDATE "
                        + table
                        + " SET parked = FALSE WHERE id = ANY(ARRAY(SELECT w.id FROM"
                        + " (SELECT msg_key, LEAST(2 * COUNT(*), "
                        + UNPARK_LIMIT
                        + ") AS n FROM d WHERE msg_key IS NOT NULL GROUP BY msg_key) k"
                        + firstParked
                        + " WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.id = w.id))))"
                        + " SELECT id, receipt, msg_key FROM d";
        // the settings first, so that the lock statement is planned with them too
        this.lockAndCompleteKeyed = claimSettings + "; " + locks + "; " + completeKeyed;
        this.claimFreeSql = Sql.named(claimSettings + "; " + claimFree);
        this.claimFreeOwnedSql = Sql.named(claimSettings + "; " + claimFreeOwned);
        this.lockAndCompleteKeyedSql = Sql.named(lockAndCompleteKeyed);
        // The statements a relay runs outside a claim transaction take the planner settings along
        // (one round trip): planned while the table was empty they would scan it whole.
        String withPlans = "SELECT " + INDEX_PLANS + "; ";
        this.deleteUnkeyedSql = Sql.named(withPlans + deleteUnkeyed);
        this.deleteKeyedSql = Sql.named(withPlans + deleteKeyed);
        this.extendSql = Sql.named(withPlans + extend);
        this.abandonSql = Sql.named(withPlans + abandon);
    }

    /**
     * Locks a page of the rows that meet {@code condition} (alias {@code c}) and probes their
     * predecessors.
     */
    private String page(String condition) {
        String locked =
                "SELECT c.id, c.seq, c.msg_key, c.available_at FROM "
                        + table
                        + " c WHERE "
                        + AT_READ_COMMITTED
                        + " AND "
                        + condition
                        + " ORDER BY "
                        + claimOrder
                        + " LIMIT :limit FOR UPDATE OF c SKIP LOCKED";
        // the predecessor, and whether the claimer itself holds it (a live lease of its own): such
        // a row is skipped, not parked (ClaimWalk)
        return "SELECT c.id, c.seq, c.msg_key, c.available_at, pr.seq AS prev_seq,"
                + " COALESCE(pr.lease_owner = :owner AND pr.available_at > :now, FALSE) AS prev_mine"
                + " FROM ("
                + locked
                + ") c LEFT JOIN LATERAL (SELECT p.seq, p.lease_owner, p.available_at FROM "
                + table
                + earlierOfKey("c")
                + " ORDER BY p.seq DESC LIMIT 1) pr ON TRUE";
    }

    /** Reads a page, leases the candidates nothing precedes, returns the page. */
    private String claimFree(String page, String leaseSet, String returning) {
        return "WITH page AS ("
                + page
                + "),"
                + " leased AS (UPDATE "
                + table
                + " AS t"
                + leaseSet
                + " WHERE t.id = ANY(ARRAY(SELECT page.id FROM page"
                + " WHERE page.msg_key IS NULL OR page.prev_seq IS NULL))"
                + returning
                + ") SELECT page.id AS c_id, page.seq AS c_seq, page.msg_key AS c_key,"
                + " page.prev_seq, page.prev_mine, leased.* FROM page LEFT JOIN leased ON"
                + " leased.id = page.id"
                + " ORDER BY page.available_at, page.seq";
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
    @Nullable Instant getTime(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    /**
     * PostgreSQL's default level is READ COMMITTED, so transactions run as the pool hands them out
     * (asking for a level costs round trips on every call); one that finds itself at another level
     * rolls back, and every transaction from then on asks for READ COMMITTED.
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

    /**
     * Whether this store found its connections at another level and now asks for READ COMMITTED.
     */
    boolean asksForReadCommitted() {
        return askForReadCommitted;
    }

    /**
     * The claim transaction plans without sequential scans ({@link #INDEX_PLANS}), checks it runs
     * at READ COMMITTED, and is cut off by the server if its client goes silent inside it for
     * {@link #IDLE_CUT_OFF_MILLIS} (a frozen relay then holds its rows and bucket locks that long
     * at most, not until TCP gives up).
     */
    @Override
    void beginClaim(Handle h) {
        String level = h.createQuery(beginClaim).mapTo(String.class).one();
        if (!READ_COMMITTED.equals(level)) {
            throw new NotReadCommitted();
        }
    }

    @Override
    void beginMembership(Handle h) {
        h.createQuery(
                        "SELECT set_config('idle_in_transaction_session_timeout', '"
                                + IDLE_CUT_OFF_MILLIS
                                + "', true)")
                .mapTo(String.class)
                .one();
    }

    /** The advisory lock {@code (outbox, -1)}: beside the bucket locks 0 to 255. */
    @Override
    boolean lockMembership(Handle h, boolean wait) {
        if (wait) {
            h.createQuery("SELECT 1 FROM pg_advisory_xact_lock(:class, -1)")
                    .bind("class", lockKey)
                    .mapTo(Integer.class)
                    .one();
            return true;
        }
        return h.createQuery("SELECT pg_try_advisory_xact_lock(:class, -1)")
                .bind("class", lockKey)
                .mapTo(Boolean.class)
                .one();
    }

    /**
     * Advisory locks of this outbox's buckets ({@code pg_advisory_xact_lock(outbox, bucket)}), in
     * ascending order.
     */
    @Override
    void lockBuckets(Handle h, Collection<Integer> buckets) {
        if (buckets.isEmpty()) {
            return;
        }
        h.createQuery(
                        "SELECT count(pg_advisory_xact_lock(:class, s.b)) FROM (SELECT"
                                + " unnest(CAST(:buckets AS integer[])) AS b ORDER BY 1) s")
                .bind("class", lockKey)
                .bindArray("buckets", Integer.class, new ArrayList<>(buckets))
                .mapTo(Long.class)
                .one();
    }

    /**
     * One statement: the owner is checked before the lock is tried ({@code OFFSET 0} keeps the
     * planner from evaluating {@code pg_try_advisory_xact_lock} on rows the owner check drops).
     */
    @Override
    Set<Integer> tryLockOwnedBuckets(
            Handle h, Collection<Integer> buckets, @Nullable String member) {
        if (member == null || buckets.isEmpty()) {
            return tryLockBuckets(h, buckets);
        }
        return new HashSet<>(
                h.createQuery(
                                "SELECT b FROM (SELECT o.bucket AS b FROM "
                                        + bucketsTable
                                        + " o WHERE o.owner = :member"
                                        + " AND o.bucket = ANY(CAST(:buckets AS integer[]))"
                                        + " OFFSET 0) s WHERE pg_try_advisory_xact_lock(:class, b)")
                        .bind("class", lockKey)
                        .bind("member", member)
                        .bindArray("buckets", Integer.class, new ArrayList<>(buckets))
                        .mapTo(Integer.class)
                        .list());
    }

    @Override
    Set<Integer> tryLockBuckets(Handle h, Collection<Integer> buckets) {
        if (buckets.isEmpty()) {
            return Set.of();
        }
        return new HashSet<>(
                h.createQuery(
                                "SELECT b FROM unnest(CAST(:buckets AS integer[])) AS b"
                                        + " WHERE pg_try_advisory_xact_lock(:class, b)")
                        .bind("class", lockKey)
                        .bindArray("buckets", Integer.class, new ArrayList<>(buckets))
                        .mapTo(Integer.class)
                        .list());
    }

    @Override
    void lockBucketsOfIds(Handle h, Collection<String> ids) {
        if (ids.isEmpty()) {
            return;
        }
        String level =
                h.createQuery(lockBucketsOfIds)
                        .bind("class", lockKey)
                        .bindArray("ids", String.class, new ArrayList<>(ids))
                        .mapTo(String.class)
                        .one();
        if (!READ_COMMITTED.equals(level)) {
            throw new NotReadCommitted();
        }
    }

    /**
     * Leases, in one round trip, every candidate of the first page that nothing precedes; goes on
     * with the general claim transaction only when the page had candidates behind an earlier
     * message of their key.
     */
    @Override
    List<StoredRow> claim(
            Db db, Instant now, LeaseTerms terms, int limit, @Nullable String member) {
        ClaimWalk walk = new ClaimWalk(limit, member != null);
        List<FirstPageRow> page =
                afterSettings(
                        db,
                        "claim",
                        member == null ? claimFreeSql : claimFreeOwnedSql,
                        0,
                        b ->
                                (member == null
                                                ? b.time("now", now, this)
                                                        .time("until", terms.until(), this)
                                                : b.set("member", member)
                                                        .set(
                                                                "lease_ms",
                                                                leaseMillis(now, terms.until())))
                                        .set("limit", limit)
                                        .set("owner", terms.owner())
                                        .set("token", terms.token()),
                        rs ->
                                new FirstPageRow(
                                        new Candidate(
                                                rs.getString(1),
                                                rs.getLong(2),
                                                rs.getString(3),
                                                rs.getObject(4) == null ? null : rs.getLong(4),
                                                rs.getBoolean(5),
                                                null),
                                        rs.getString(LEASED_COLUMNS) == null
                                                ? null
                                                : StoredRow.read(rs, this, LEASED_COLUMNS)));
        if (page == null) { // not at READ COMMITTED: nothing was leased
            return claimPages(db, now, terms, walk, member);
        }
        List<StoredRow> leased = new ArrayList<>(page.size());
        boolean blocked = false;
        for (FirstPageRow row : page) {
            if (row.leased() != null) {
                walk.took(row.candidate().seq());
                leased.add(row.leased());
            } else if (!walk.skipped(row.candidate())) {
                blocked = true; // to take behind a row taken here, or to park
            }
        }
        if (blocked && !walk.full()) {
            leased.addAll(claimPages(db, now, terms, walk, member));
        }
        return leased;
    }

    /** A member claim's lease length in milliseconds, bound as {@code :lease_ms}. */
    private static final String LEASE_MS = "CAST(:lease_ms AS integer) * interval '1 millisecond'";

    private static int leaseMillis(Instant now, Instant until) {
        return (int) Math.min(Integer.MAX_VALUE, Duration.between(now, until).toMillis());
    }

    /** A row of the first page, and its message if it was leased. */
    private record FirstPageRow(Candidate candidate, @Nullable StoredRow leased) {}

    @Override
    List<Candidate> lockCandidates(
            Handle h, Instant now, int limit, @Nullable List<Integer> owned, String owner) {
        Query page = h.createQuery(owned == null ? candidates : candidatesOwned);
        if (owned != null) {
            page.bindList("owned", owned);
        }
        return candidates(
                page.bind("now", time(now)).bind("limit", limit).bind("owner", owner), true);
    }

    @Override
    List<StoredRow> lease(Handle h, List<Candidate> taken, LeaseTerms terms) {
        List<StoredRow> rows =
                terms.bindTo(h.createQuery(lease), this)
                        .bindArray("ids", String.class, ids(taken))
                        .map((rs, ctx) -> StoredRow.read(rs, this))
                        .list();
        return inOrder(taken, rows);
    }

    @Override
    void parkIfStillBlocked(Handle h, List<Candidate> rows) {
        h.createUpdate(park).bindArray("ids", String.class, ids(rows)).execute();
    }

    /**
     * Completes keyed leases claim by claim, each in one round trip that takes the lock, deletes
     * and unparks.
     */
    @Override
    Set<Receipt.Lease> complete(Db db, String owner, List<Receipt> receipts) {
        Set<Receipt.Lease> deleted = new HashSet<>();
        List<Receipt> unkeyed = new ArrayList<>();
        for (Receipt r : receipts) {
            if (!r.keyed()) {
                unkeyed.add(r);
            }
        }
        if (!unkeyed.isEmpty()) {
            deleted.addAll(completeUnkeyed(db, owner, unkeyed));
        }
        for (Map.Entry<String, List<String>> claim : byToken(receipts, true).entrySet()) {
            List<Receipt.Lease> removed =
                    afterSettings(
                            db,
                            "complete",
                            lockAndCompleteKeyedSql,
                            1,
                            b ->
                                    b.set("class", lockKey)
                                            .set("owner", owner)
                                            .set("token", claim.getKey())
                                            .array("ids", "varchar", claim.getValue()),
                            SqlDialect::lease);
            if (removed == null) { // not at READ COMMITTED: nothing was deleted
                List<Receipt> ofClaim = new ArrayList<>();
                for (String id : claim.getValue()) {
                    ofClaim.add(new Receipt(claim.getKey(), id, true));
                }
                deleted.addAll(
                        db.transaction(
                                "complete",
                                h -> {
                                    lockBucketsOfIds(h, claim.getValue());
                                    return deleteLeasesAndUnpark(h, owner, ofClaim);
                                }));
            } else {
                deleted.addAll(removed);
            }
        }
        return deleted;
    }

    @Override
    Set<Receipt.Lease> completeUnkeyed(Db db, String owner, List<Receipt> receipts) {
        return db.statement(
                "complete", h -> deleteByToken(h, deleteUnkeyedSql, owner, receipts).removed());
    }

    @Override
    Removed<Receipt.Lease> deleteLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed) {
        return deleteByToken(h, keyed ? deleteKeyedSql : deleteUnkeyedSql, owner, receipts);
    }

    @Override
    Removed<String> deleteDead(Handle h, Collection<String> ids) {
        return removedIds(
                h.createQuery(deleteDead).bindArray("ids", String.class, new ArrayList<>(ids)));
    }

    @Override
    Set<Receipt.Lease> extend(
            Db db, String owner, List<Receipt> receipts, @Nullable Instant until) {
        return leasePairs(db, "extend", extendSql, owner, receipts, until);
    }

    @Override
    Set<Receipt.Lease> abandon(Db db, String owner, List<Receipt> receipts) {
        return leasePairs(db, "abandon", abandonSql, owner, receipts, null);
    }

    /** Runs a statement over (id, receipt) pairs of one owner; returns the leases it changed. */
    private Set<Receipt.Lease> leasePairs(
            Db db,
            String operation,
            Sql sql,
            String owner,
            List<Receipt> receipts,
            @Nullable Instant until) {
        List<String> ids = new ArrayList<>(receipts.size());
        List<String> tokens = new ArrayList<>(receipts.size());
        for (Receipt r : receipts) {
            ids.add(r.id());
            tokens.add(r.token());
        }
        return db.statement(
                operation,
                h ->
                        Sql.jdbc(
                                () -> {
                                    try (Sql.Bound b = sql.prepare(h)) {
                                        b.set("owner", owner)
                                                .array("ids", "varchar", ids)
                                                .array("tokens", "varchar", tokens);
                                        if (until != null) {
                                            b.time("until", until, this);
                                        }
                                        Set<Receipt.Lease> changed = new HashSet<>();
                                        try (ResultSet rs = afterPlans(b.statement)) {
                                            while (rs.next()) {
                                                changed.add(lease(rs));
                                            }
                                        }
                                        return changed;
                                    }
                                }));
    }

    /** Executes "the planner settings; a statement" and returns the statement's rows. */
    private static ResultSet afterPlans(PreparedStatement st) throws SQLException {
        st.execute();
        return nextResult(st, "the planner settings");
    }

    /** The rows of the statement sent after {@code first} in the same round trip. */
    private static ResultSet nextResult(PreparedStatement st, String first) throws SQLException {
        if (!st.getMoreResults()) {
            throw new SQLException("the statement after " + first + " returned no rows");
        }
        return st.getResultSet();
    }

    @Override
    void unpark(Handle h, Map<String, Integer> removed) {
        if (removed.isEmpty()) {
            return;
        }
        List<String> keys = new ArrayList<>(removed.size());
        List<Integer> counts = new ArrayList<>(removed.size());
        removed.forEach(
                (key, n) -> {
                    keys.add(key);
                    counts.add(unparkCount(n));
                });
        h.createUpdate(unpark)
                .bindArray("keys", String.class, keys)
                .bindArray("counts", Integer.class, counts)
                .execute();
    }

    /**
     * Runs "the settings; {@code between} statements (a keyed completion's bucket locks); a
     * statement" in one round trip: without an open transaction they run as one implicit
     * transaction, whose locks last until the statement is done, and whose last statement takes its
     * snapshot after the locks were granted. No lock is held across a round trip to the client.
     * Returns the statement's rows, or null when the transaction was not at READ COMMITTED (the
     * statement is then guarded to change nothing, and from now on every transaction asks for that
     * level).
     */
    private <T> @Nullable List<T> afterSettings(
            Db db, String operation, Sql sql, int between, Binder binder, RowReader<T> rows) {
        if (askForReadCommitted) {
            return null;
        }
        HandleCallback<Optional<List<T>>, RuntimeException> work =
                h ->
                        Sql.jdbc(
                                () -> {
                                    try (Sql.Bound b = sql.prepare(h)) {
                                        binder.bind(b);
                                        PreparedStatement st = b.statement;
                                        st.execute();
                                        String level;
                                        try (ResultSet rs = st.getResultSet()) {
                                            rs.next();
                                            level = rs.getString(1);
                                        }
                                        for (int i = 0; i < between; i++) {
                                            nextResult(st, "the claim settings").close();
                                        }
                                        List<T> out = new ArrayList<>();
                                        try (ResultSet rs = nextResult(st, "the claim settings")) {
                                            while (rs.next()) {
                                                out.add(rows.read(rs));
                                            }
                                        }
                                        return READ_COMMITTED.equals(level)
                                                ? Optional.of(out)
                                                : Optional.<List<T>>empty();
                                    }
                                });
        Optional<List<T>> result = db.statement(operation, work);
        if (result.isEmpty()) {
            askForReadCommitted = true;
        }
        return result.orElse(null);
    }

    /** Sets a statement's parameters. */
    @FunctionalInterface
    private interface Binder {
        void bind(Sql.Bound b) throws SQLException;
    }

    /** Reads the current row of a result. */
    @FunctionalInterface
    private interface RowReader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** Runs a deletion once per claim token (a relay's batch is one claim: one statement). */
    private static Removed<Receipt.Lease> deleteByToken(
            Handle h, Sql sql, String owner, List<Receipt> receipts) {
        Set<Receipt.Lease> leases = new HashSet<>();
        Map<String, Integer> keys = new HashMap<>();
        for (Map.Entry<String, List<String>> claim : byToken(receipts, null).entrySet()) {
            Sql.jdbc(
                    () -> {
                        try (Sql.Bound b = sql.prepare(h);
                                ResultSet rs =
                                        afterPlans(
                                                b.set("owner", owner)
                                                        .set("token", claim.getKey())
                                                        .array("ids", "varchar", claim.getValue())
                                                        .statement)) {
                            while (rs.next()) {
                                leases.add(lease(rs));
                                String key = rs.getString("msg_key");
                                if (key != null) {
                                    keys.merge(key, 1, Integer::sum);
                                }
                            }
                        }
                        return Boolean.TRUE; // Sql.jdbc returns a value
                    });
        }
        return new Removed<>(leases, keys);
    }

    /**
     * The ids of each claim token, in the order the tokens first appear; only keyed or only unkeyed
     * receipts when {@code keyed} is given.
     */
    private static Map<String, List<String>> byToken(
            List<Receipt> receipts, @Nullable Boolean keyed) {
        Map<String, List<String>> ids = new LinkedHashMap<>();
        for (Receipt r : receipts) {
            if (keyed == null || r.keyed() == keyed) {
                ids.computeIfAbsent(r.token(), t -> new ArrayList<>()).add(r.id());
            }
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
