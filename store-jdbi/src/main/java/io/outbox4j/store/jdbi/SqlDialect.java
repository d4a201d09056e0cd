package io.outbox4j.store.jdbi;

import io.outbox4j.api.OutboxException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.argument.Argument;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.jspecify.annotations.Nullable;

/**
 * One database's way of running the outbox over one table: its SQL, fixed when the store is built,
 * and its claim and completion strategy (docs/per-key-order.md). The only variable parts of the SQL
 * are the table name, validated against {@link #TABLE_NAME} and quoted, and the lists Jdbi expands
 * for {@code <ids>}-style attributes; no value is ever written into SQL text.
 *
 * <p>This class holds what every dialect shares; a subclass supplies the bucket locks, the locking
 * read of claim candidates, how leased rows come back, and how completed rows are deleted.
 */
abstract class SqlDialect {
    /**
     * The identifiers a table may be named with: at most 63 characters, the smallest limit of the
     * dialects.
     */
    static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    /** The columns {@link StoredRow#read} reads, by position and in this order. */
    static final String MESSAGE_COLUMNS =
            "id, seq, topic, msg_key, module, content_type, payload, headers, occurred_at,"
                    + " not_before, enqueued_at, attempts";

    /**
     * The most rows one claim parks. A claim goes on reading pages while it finds blocked rows and
     * has taken fewer than its limit; this bound keeps a claim short when a burst of rows became
     * blocked (the next claim goes on from there: parked rows are out of its way).
     */
    static final int MAX_PARKED = 10_000;

    /** The largest page a claim reads once it finds blocked rows (pages double up to it). */
    static final int MAX_PAGE = 1000;

    /**
     * The most parked rows of one key a removal unparks. A removal unparks {@link #unparkCount(int)
     * twice as many} rows of a key as it removed of that key: enough for the next claim to take a
     * longer run of the key than the last one (a key unblocked by one removal gets back to full
     * batches within a few claims), without putting back a hot key's whole backlog that other
     * claimers would park again at once.
     */
    static final int UNPARK_LIMIT = 1000;

    /** The most values one list statement binds. */
    static final int LIST_CHUNK = 1000;

    final String tableName;

    /** The quoted table name. */
    final String table;

    /** The quoted names of the members and bucket-owner tables (docs/scale-out.md). */
    final String membersTable;

    final String bucketsTable;

    /** This database's clock as a UTC timestamp expression of the dialect's time type. */
    final String dbNow;

    /**
     * The buckets {@code :member} owns while its member lease lasts by the database's clock: the
     * ownership check of a claim made as a member.
     */
    final String ownedBuckets;

    /** The buckets of the rows named by {@code <ids>} (keyed rows only). */
    final String bucketsOfIds;

    /** Whether a dead letter counts as an earlier message of its key (the default). */
    final boolean deadLettersBlock;

    final String insert;
    final String release;
    final String deadLetter;
    final String keyOf;
    final String deleteAll;
    final String statistics;
    final String blockedKeys;
    final String replay;
    final String lastError;

    /** Rows of alias {@code c} that are not dead, not parked and due at {@code :now}. */
    static final String CLAIMABLE =
            "c.dead_at IS NULL AND c.parked = FALSE AND c.available_at <= :now";

    /** The claim order of this dialect (see {@link Orders#claim()}). */
    final String claimOrder;

    /** {@link #CLAIMABLE} rows in claim order, {@code :limit} of them. */
    final String claimable;

    /** {@link #claimable} of a member: keyed rows only of the buckets in {@code <owned>}. */
    final String claimableOwned;

    /** Rows of alias {@code c} that are unkeyed or of a bucket in {@code <owned>}. */
    static final String OWNED = " AND (c.msg_key IS NULL OR c.bucket IN (<owned>))";

    /** The enqueue sequence of the latest earlier row of candidate {@code c}'s key, or NULL. */
    final String predecessor;

    /** How the dead-letter listing orders: dead-letter time, then enqueue order. */
    private final String deadOrder;

    /**
     * Builds the statements every dialect shares.
     *
     * @param tableName the table name, already validated
     * @param quote the dialect's identifier quote
     * @param deadLettersBlock whether dead letters count as earlier messages of their key
     * @param order how this dialect spells the three orders so that its planner walks the matching
     *     index in order (claim index, key index backwards, dead-letter index)
     * @param dbNow the database's clock as a UTC value of the dialect's time type
     */
    SqlDialect(String tableName, char quote, boolean deadLettersBlock, Orders order, String dbNow) {
        this.tableName = tableName;
        this.table = quote + tableName + quote;
        this.membersTable = quote + Schema.objectName(tableName, "_members") + quote;
        this.bucketsTable = quote + Schema.objectName(tableName, "_buckets") + quote;
        this.dbNow = dbNow;
        this.ownedBuckets =
                "SELECT b.bucket FROM "
                        + bucketsTable
                        + " b JOIN "
                        + membersTable
                        + " m ON m.member_id = b.owner WHERE b.owner = :member AND m.lease_until > "
                        + dbNow;
        this.bucketsOfIds =
                "SELECT DISTINCT bucket FROM "
                        + table
                        + " WHERE id IN (<ids>) AND bucket IS NOT NULL";
        this.deadLettersBlock = deadLettersBlock;
        this.insert =
                "INSERT INTO "
                        + table
                        + " (id, topic, msg_key, module, content_type, payload, headers,"
                        + " occurred_at, not_before, enqueued_at, available_at)"
                        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        this.claimOrder = order.claim();
        this.claimable = " WHERE " + CLAIMABLE + " ORDER BY " + claimOrder + " LIMIT :limit";
        this.claimableOwned =
                " WHERE " + CLAIMABLE + OWNED + " ORDER BY " + claimOrder + " LIMIT :limit";
        this.predecessor =
                "(SELECT p.seq FROM "
                        + table
                        + earlierOfKey("c")
                        + " ORDER BY "
                        + order.predecessor()
                        + " LIMIT 1)";
        String leased =
                " WHERE id = :id AND receipt = :token AND lease_owner = :owner AND dead_at IS NULL";
        this.release =
                "UPDATE "
                        + table
                        + " SET available_at = :at, last_error = :error, lease_owner = NULL,"
                        + " receipt = NULL"
                        + leased;
        // A dead row has no availability: it leaves every claim index range, not only the filter.
        this.deadLetter =
                "UPDATE "
                        + table
                        + " SET dead_at = :at, dead_reason = :reason, available_at = NULL,"
                        + " lease_owner = NULL, receipt = NULL"
                        + leased;
        this.keyOf = "SELECT msg_key FROM " + table + " WHERE id = :id";
        this.deleteAll = "DELETE FROM " + table;
        this.deadOrder = order.dead();
        String live = "dead_at IS NULL AND available_at ";
        this.statistics =
                "SELECT topic,"
                        + " SUM(CASE WHEN "
                        + live
                        + "<= :now THEN 1 ELSE 0 END) AS n_ready,"
                        + " SUM(CASE WHEN "
                        + live
                        + "> :now AND lease_owner IS NULL THEN 1 ELSE 0 END) AS n_delayed,"
                        + " SUM(CASE WHEN "
                        + live
                        + "> :now AND lease_owner IS NOT NULL THEN 1 ELSE 0 END) AS n_leased,"
                        + " SUM(CASE WHEN dead_at IS NOT NULL THEN 1 ELSE 0 END) AS n_dead,"
                        + " MIN(CASE WHEN "
                        + live
                        + "<= :now THEN available_at END) AS oldest_ready"
                        + " FROM "
                        + table
                        + " GROUP BY topic";
        // a dead letter blocks nothing when dead letters do not block their key (OutboxStatistics)
        this.blockedKeys =
                deadLettersBlock
                        ? "SELECT COUNT(DISTINCT msg_key) FROM "
                                + table
                                + " WHERE dead_at IS NOT NULL AND msg_key IS NOT NULL"
                        : "SELECT 0";
        // Unparking is always safe (a claim parks the row again if it is still blocked).
        this.replay =
                "UPDATE "
                        + table
                        + " SET dead_at = NULL, dead_reason = NULL, attempts = 0, available_at = :now,"
                        + " parked = FALSE, lease_owner = NULL, receipt = NULL"
                        + " WHERE id IN (<ids>) AND dead_at IS NOT NULL";
        this.lastError =
                "SELECT last_error, dead_reason, dead_at FROM " + table + " WHERE id = :id";
    }

    /**
     * Selects dead letters by a filter, oldest dead-letter time first (ties by enqueue order):
     * optional {@code :topic}, {@code :deadFrom}, {@code :deadBefore}, and with {@code after} the
     * keyset cursor {@code :afterAt}, {@code :afterSeq}; {@code :limit} rows.
     */
    String deadLetters(
            String columns, boolean topic, boolean deadFrom, boolean deadBefore, boolean after) {
        return "SELECT "
                + columns
                + " FROM "
                + table
                + " WHERE dead_at IS NOT NULL"
                + (topic ? " AND topic = :topic" : "")
                + (deadFrom ? " AND dead_at >= :deadFrom" : "")
                + (deadBefore ? " AND dead_at < :deadBefore" : "")
                + (after
                        ? " AND (dead_at > :afterAt OR (dead_at = :afterAt AND seq > :afterSeq))"
                        : "")
                + " ORDER BY "
                + deadOrder
                + " LIMIT :limit";
    }

    // ------------------------------------------------------------------------------------------
    // What each dialect supplies
    // ------------------------------------------------------------------------------------------

    /**
     * Other tables this store needs besides the outbox table, for error messages.
     *
     * @return {@code " or its members and buckets tables \"t_members\", \"t_buckets\""}
     */
    String companionTables() {
        return " or its members and buckets tables \""
                + Schema.objectName(tableName, "_members")
                + "\", \""
                + Schema.objectName(tableName, "_buckets")
                + "\"";
    }

    /**
     * The insert of a single message. A duplicate id fails it; PostgreSQL's inserts nothing instead
     * (update count 0), so the caller's transaction stays usable without a savepoint.
     */
    String insertOne() {
        return insert;
    }

    /**
     * Binds an instant as this dialect's UTC timestamp value; the default, for a {@code TIMESTAMP}
     * column without a time zone: the UTC wall-clock time as a {@link LocalDateTime}.
     */
    Object timeValue(Instant value) {
        return LocalDateTime.ofInstant(value, ZoneOffset.UTC);
    }

    /** Reads a UTC timestamp written through {@link #timeValue}. */
    @Nullable Instant getTime(ResultSet rs, int column) throws SQLException {
        LocalDateTime t = rs.getObject(column, LocalDateTime.class);
        return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }

    /** Reads a timestamp column by name. */
    final @Nullable Instant getTime(ResultSet rs, String column) throws SQLException {
        return getTime(rs, rs.findColumn(column));
    }

    /** Reads a timestamp column that is never NULL. */
    final Instant requireTime(ResultSet rs, int column) throws SQLException {
        Instant t = getTime(rs, column);
        if (t == null) {
            throw new SQLException("timestamp column " + column + " is NULL");
        }
        return t;
    }

    /** Reads a timestamp column that is never NULL, by name. */
    final Instant requireTime(ResultSet rs, String column) throws SQLException {
        return requireTime(rs, rs.findColumn(column));
    }

    /**
     * Takes the locks of these buckets until the end of the transaction, waiting for them, in
     * ascending order (so two lockers never wait for each other in a cycle). Removals of keyed rows
     * take them before they unpark; the parking of a claim tries them ({@link #tryLockBuckets}).
     * The default locks the buckets' rows of the bucket-owner table.
     */
    void lockBuckets(Handle h, Collection<Integer> buckets) {
        lockBucketRows(h, buckets, "ORDER BY bucket FOR UPDATE");
    }

    /**
     * Takes the locks of those buckets that nobody holds, without waiting. The default locks the
     * buckets' rows of the bucket-owner table ({@code SKIP LOCKED}).
     *
     * @return the buckets now locked by this transaction
     */
    Set<Integer> tryLockBuckets(Handle h, Collection<Integer> buckets) {
        return new HashSet<>(lockBucketRows(h, buckets, "FOR UPDATE SKIP LOCKED"));
    }

    /**
     * Locks the rows of these buckets in the bucket-owner table with {@code locking} (the tail of
     * the select: {@code … FOR UPDATE …}) and returns the buckets whose rows it locked.
     */
    private List<Integer> lockBucketRows(Handle h, Collection<Integer> buckets, String locking) {
        if (buckets.isEmpty()) {
            return List.of();
        }
        return h.createQuery(
                        "SELECT bucket FROM "
                                + bucketsTable
                                + " WHERE bucket IN (<buckets>) "
                                + locking)
                .bindList("buckets", new ArrayList<>(new TreeSet<>(buckets)))
                .mapTo(Integer.class)
                .list();
    }

    /**
     * {@link #tryLockBuckets}, in a member's claim only of the buckets the member still owns: a
     * claim that outlived a handover of one of its buckets (its renewal, or another member's, moved
     * it while the claim ran) then takes no lock of a bucket another member owns now, so should it
     * go silent holding its locks it stalls none of the new owner's completions (docs/scale-out.md,
     * "No lock shared by every claimer"). PostgreSQL checks the owner in the locking statement
     * itself; the other dialects read the owners first.
     *
     * @param member the member claiming, or null for a claim of every bucket
     * @return the buckets now locked by this transaction
     */
    Set<Integer> tryLockOwnedBuckets(
            Handle h, Collection<Integer> buckets, @Nullable String member) {
        if (member == null || buckets.isEmpty()) {
            return tryLockBuckets(h, buckets);
        }
        List<Integer> stillOwned =
                h.createQuery(
                                "SELECT bucket FROM "
                                        + bucketsTable
                                        + " WHERE owner = :member AND bucket IN (<buckets>)")
                        .bind("member", member)
                        .bindList("buckets", new ArrayList<>(buckets))
                        .mapTo(Integer.class)
                        .list();
        return tryLockBuckets(h, stillOwned);
    }

    /** Runs first in a claim transaction (session settings a dialect wants for it). */
    void beginClaim(Handle h) {}

    /** Runs first in a membership transaction (PostgreSQL: cut off if its client goes silent). */
    void beginMembership(Handle h) {}

    /**
     * Takes the outbox's membership lock until the end of the transaction: the one writer of the
     * bucket assignment at a time. MariaDB, MySQL and H2 lock the row {@code 'members'} of the
     * table {@code <table>_lock} (inserted on first use).
     *
     * @param wait whether to wait for it; without waiting, a lock another transaction holds is not
     *     taken
     * @return whether this transaction holds the lock
     */
    boolean lockMembership(Handle h, boolean wait) {
        String lockTable = quoted(Schema.objectName(tableName, "_lock"));
        if (h.createQuery("SELECT COUNT(*) FROM " + lockTable + " WHERE name = 'members'")
                        .mapTo(Integer.class)
                        .one()
                == 0) {
            h.execute(insertMembershipLockRow(lockTable));
        }
        return !h.createQuery(
                        "SELECT name FROM "
                                + lockTable
                                + " WHERE name = 'members' FOR UPDATE"
                                + (wait ? "" : " SKIP LOCKED"))
                .mapTo(String.class)
                .list()
                .isEmpty();
    }

    /** Inserts the membership lock row unless it exists. */
    String insertMembershipLockRow(String lockTable) {
        throw new UnsupportedOperationException("no lock table in this dialect");
    }

    /** Quotes an identifier of this dialect. */
    String quoted(String identifier) {
        return table.charAt(0) + identifier + table.charAt(0);
    }

    /**
     * Reads one page of claim candidates in claim order, with their predecessors, and locks the
     * rows it returns against other writers until the end of the transaction.
     *
     * @param owned for a member's claim, the buckets it owns (keyed rows of other buckets are left
     *     out); null for a claim of every bucket
     * @param owner the claimer, for {@link Candidate#prevMine()} (dialects that do not read it
     *     ignore it)
     */
    abstract List<Candidate> lockCandidates(
            Handle h, Instant now, int limit, @Nullable List<Integer> owned, String owner);

    /** Leases the taken candidates; returns their rows in the order given. */
    abstract List<StoredRow> lease(Handle h, List<Candidate> taken, LeaseTerms terms);

    /**
     * Deletes the leases named by the receipts, returning the leases it deleted and the keys of the
     * deleted rows.
     *
     * @param keyed whether the receipts are of keyed messages (the caller holds their buckets'
     *     locks); unkeyed receipts delete only rows without a key
     */
    abstract Removed<Receipt.Lease> deleteLeases(
            Handle h, String owner, List<Receipt> receipts, boolean keyed);

    /** Deletes the dead letters among {@code ids}; returns the deleted ids and their keys. */
    abstract Removed<String> deleteDead(Handle h, Collection<String> ids);

    /**
     * Moves the lease end of the named leases; returns the leases it moved. One statement where the
     * database can report which rows it changed.
     */
    abstract Set<Receipt.Lease> extend(Db db, String owner, List<Receipt> receipts, Instant until);

    /**
     * Gives back the named leases: lease cleared, one attempt taken back, due at the enqueue time;
     * returns the leases it gave back.
     */
    abstract Set<Receipt.Lease> abandon(Db db, String owner, List<Receipt> receipts);

    /**
     * Unparks, for each key, the first {@link #unparkCount(int)} parked rows in enqueue order.
     *
     * @param removed how many rows each key lost
     */
    abstract void unpark(Handle h, Map<String, Integer> removed);

    /** How many parked rows of a key to unpark when it lost {@code removed} rows. */
    static int unparkCount(int removed) {
        return (int) Math.min(UNPARK_LIMIT, 2L * removed);
    }

    /**
     * Runs a transaction on the handle. Every dialect but PostgreSQL (whose default it is) asks for
     * READ COMMITTED: each statement sees what was committed before it started, which is what the
     * bucket locks rely on.
     */
    <T> T inTransaction(Handle h, HandleCallback<T, RuntimeException> work) {
        return h.inTransaction(TransactionIsolationLevel.READ_COMMITTED, work);
    }

    // ------------------------------------------------------------------------------------------
    // Claim and completion (docs/per-key-order.md)
    // ------------------------------------------------------------------------------------------

    /**
     * One claim: reads pages of candidates, leases the rows the walk takes and parks the rows it
     * finds blocked, in one transaction.
     *
     * @param member the owner claiming as a member (keyed rows only of its buckets), or null
     */
    List<StoredRow> claim(
            Db db, Instant now, LeaseTerms terms, int limit, @Nullable String member) {
        return claimPages(db, now, terms, new ClaimWalk(limit, member != null), member);
    }

    /**
     * The claim transaction, continuing a walk that may already have taken rows. No lock is shared
     * by all claimers: the page's rows are locked ({@code FOR UPDATE SKIP LOCKED} or by primary
     * key), a member's buckets are read once by the database's clock, and blocked rows are parked
     * only in the buckets whose lock this claim gets without waiting, each checked again after the
     * lock (docs/per-key-order.md, "Parking and unparking").
     */
    final List<StoredRow> claimPages(
            Db db, Instant now, LeaseTerms terms, ClaimWalk walk, @Nullable String member) {
        return db.transaction(
                "claim",
                h -> {
                    // each try (Db tries again after a deadlock or lock timeout) walks from what
                    // was committed before it, never from what an aborted try took
                    ClaimWalk attempt = walk.copy();
                    beginClaim(h);
                    if (member == null) {
                        return claimPages(h, now, terms, attempt, null);
                    }
                    // a member's claim is timed by the database's clock (docs/scale-out.md,
                    // "Clocks"): due-ness, expiry, and the new leases' end
                    Instant at =
                            h.createQuery("SELECT " + dbNow)
                                    .map((rs, ctx) -> requireTime(rs, 1))
                                    .one();
                    LeaseTerms byDb =
                            new LeaseTerms(
                                    at.plus(Duration.between(now, terms.until())),
                                    terms.owner(),
                                    terms.token());
                    return claimPages(h, at, byDb, attempt, member);
                });
    }

    private List<StoredRow> claimPages(
            Handle h, Instant now, LeaseTerms terms, ClaimWalk walk, @Nullable String member) {
        @Nullable List<Integer> owned = member == null ? null : owned(h, member);
        List<StoredRow> leased = new ArrayList<>();
        int parked = 0;
        for (int size = walk.limit(); ; size = Math.max(size, Math.min(2 * size, MAX_PAGE))) {
            List<Candidate> candidates = lockCandidates(h, now, size, owned, terms.owner());
            ClaimWalk.Step step = walk.next(candidates);
            if (!step.taken().isEmpty()) {
                leased.addAll(lease(h, step.taken(), terms));
            }
            boolean allParked = true;
            if (!step.parked().isEmpty()) {
                allParked = park(h, step.parked(), member);
                parked += step.parked().size();
            }
            if (step.parked().isEmpty()
                    || walk.full()
                    || walk.stopped()
                    || candidates.size() < size
                    || parked >= MAX_PARKED
                    || (!allParked && size >= MAX_PAGE)) {
                // Rows whose bucket lock was busy stay in the index: the next pages
                // (growing) read past them, up to one page of MAX_PAGE rows.
                return leased;
            }
        }
    }

    /**
     * The buckets a member owns while its lease lasts by the database's clock; {@code [-1]} (no
     * bucket) when none, so that the list binds.
     */
    List<Integer> owned(Handle h, String member) {
        List<Integer> owned =
                h.createQuery(ownedBuckets).bind("member", member).mapTo(Integer.class).list();
        return owned.isEmpty() ? List.of(-1) : owned;
    }

    /**
     * Parks blocked rows in the buckets whose lock it gets without waiting (in a member's claim: of
     * those the member still owns, {@link #tryLockOwnedBuckets}).
     *
     * @param member the member claiming, or null for a claim of every bucket
     * @return whether every row's bucket was locked (false: some rows were left as they are; the
     *     claim reads past them on larger pages, up to {@link #MAX_PAGE} rows, so that one relay
     *     holding bucket locks while it is frozen does not stop another's claims of other buckets)
     */
    boolean park(Handle h, List<Candidate> blocked, @Nullable String member) {
        Set<Integer> buckets = new TreeSet<>();
        for (Candidate c : blocked) {
            buckets.add(c.bucket());
        }
        Set<Integer> locked = tryLockOwnedBuckets(h, buckets, member);
        List<Candidate> parkable = new ArrayList<>(blocked.size());
        for (Candidate c : blocked) {
            if (locked.contains(c.bucket())) {
                parkable.add(c);
            }
        }
        if (!parkable.isEmpty()) {
            parkIfStillBlocked(h, parkable);
        }
        return parkable.size() == blocked.size();
    }

    /** Takes the locks of the buckets of the keyed rows named by ids, waiting for them. */
    void lockBucketsOfIds(Handle h, Collection<String> ids) {
        if (ids.isEmpty()) {
            return;
        }
        lockBuckets(
                h,
                h.createQuery(bucketsOfIds)
                        .bindList("ids", new ArrayList<>(ids))
                        .mapTo(Integer.class)
                        .list());
    }

    /**
     * Deletes completed leases. Receipts of unkeyed messages go without bucket locks (nothing waits
     * behind them); keyed ones take their buckets' locks and unpark their keys in the same
     * transaction.
     *
     * @return the leases deleted
     */
    Set<Receipt.Lease> complete(Db db, String owner, List<Receipt> receipts) {
        Set<Receipt.Lease> deleted = new HashSet<>();
        List<Receipt> keyed = new ArrayList<>();
        List<Receipt> unkeyed = new ArrayList<>();
        for (Receipt r : receipts) {
            (r.keyed() ? keyed : unkeyed).add(r);
        }
        for (List<Receipt> chunk : chunks(unkeyed)) {
            deleted.addAll(completeUnkeyed(db, owner, chunk));
        }
        for (List<Receipt> chunk : chunks(keyed)) {
            deleted.addAll(
                    db.transaction(
                            "complete",
                            h -> {
                                lockBucketsOfIds(h, idsOf(chunk));
                                return deleteLeasesAndUnpark(h, owner, chunk);
                            }));
        }
        return deleted;
    }

    /** Deletes leases of unkeyed messages: one statement. */
    Set<Receipt.Lease> completeUnkeyed(Db db, String owner, List<Receipt> chunk) {
        return db.statement("complete", h -> deleteLeases(h, owner, chunk, false).removed());
    }

    /** Deletes keyed leases and unparks their keys; the caller holds their buckets' locks. */
    Set<Receipt.Lease> deleteLeasesAndUnpark(Handle h, String owner, List<Receipt> chunk) {
        Removed<Receipt.Lease> removed = deleteLeases(h, owner, chunk, true);
        unpark(h, removed.keys());
        return removed.removed();
    }

    /**
     * Marks rows parked that still have an earlier row of their key: they leave the claim index
     * until that row goes. The statement starts after the caller took the rows' bucket locks, so a
     * removal that committed before sees its row gone here, and one that commits after unparks
     * them.
     */
    void parkIfStillBlocked(Handle h, List<Candidate> rows) {
        h.createUpdate(
                        "UPDATE "
                                + table
                                + " x SET parked = TRUE WHERE x.id IN (<ids>) AND "
                                + hasEarlierOfKey("x"))
                .bindList("ids", ids(rows))
                .execute();
    }

    /**
     * {@code p}: the rows of the key of the row aliased {@code alias} enqueued before it that count
     * as earlier (dead letters only when they block), as the {@code FROM … WHERE} tail of a
     * subquery: the predecessor rule of docs/per-key-order.md, in one place.
     */
    final String earlierOfKey(String alias) {
        return " p WHERE p.msg_key = "
                + alias
                + ".msg_key AND p.seq < "
                + alias
                + ".seq"
                + (deadLettersBlock ? "" : " AND p.dead_at IS NULL");
    }

    /**
     * Whether the row aliased {@code alias} has an earlier row of its key ({@link #earlierOfKey}).
     */
    final String hasEarlierOfKey(String alias) {
        return "EXISTS (SELECT 1 FROM " + table + earlierOfKey(alias) + ")";
    }

    /**
     * Unparks parked rows that nothing precedes any more (the first row of their key is parked) in
     * the given buckets, at most {@code limit}. Nothing in this version leaves such a row behind
     * (parking and unparking of a bucket are serialised by its lock, and parking rechecks after the
     * lock); a relay of 0.1 parking under the old claim lock beside relays of 0.2 during a rolling
     * upgrade can, and without this a key would wait for good. Unparking is always safe: a claim
     * parks the row again if it is still blocked.
     *
     * @return how many rows were unparked
     */
    int unparkOrphans(Handle h, List<Integer> buckets, int limit) {
        List<String> ids =
                h.createQuery(
                                "SELECT x.id FROM "
                                        + table
                                        + " x WHERE x.parked = TRUE AND x.bucket IN (<buckets>)"
                                        + " AND NOT "
                                        + hasEarlierOfKey("x")
                                        + " LIMIT :limit")
                        .bindList("buckets", buckets)
                        .bind("limit", limit)
                        .mapTo(String.class)
                        .list();
        if (ids.isEmpty()) {
            return 0;
        }
        return h.createUpdate("UPDATE " + table + " SET parked = FALSE WHERE id IN (<ids>)")
                .bindList("ids", ids)
                .execute();
    }

    /**
     * Unparks key by key with one batched statement that updates the first {@code :n} parked rows
     * of a key {@code :key} in enqueue order.
     */
    void unparkEach(Handle h, Map<String, Integer> removed, String unparkOneKey) {
        if (removed.isEmpty()) {
            return;
        }
        PreparedBatch batch = h.prepareBatch(unparkOneKey);
        removed.forEach((key, n) -> batch.bind("key", key).bind("n", unparkCount(n)).add());
        batch.execute();
    }

    // ------------------------------------------------------------------------------------------
    // Helpers for the dialects
    // ------------------------------------------------------------------------------------------

    /** An argument that binds an instant as this dialect's timestamp. */
    Argument time(Instant value) {
        return (position, statement, ctx) -> setTime(statement, position, value);
    }

    /** Binds an instant, or SQL NULL, as this dialect's timestamp. */
    void setTime(PreparedStatement st, int index, @Nullable Instant value) throws SQLException {
        if (value == null) {
            st.setNull(index, java.sql.Types.TIMESTAMP);
        } else {
            st.setObject(index, timeValue(value));
        }
    }

    /** Reads a page of candidates (id, seq, msg_key, prev_seq) from a prepared query. */
    static List<Candidate> candidates(Query query) {
        return candidates(query, false);
    }

    /**
     * Reads candidates; {@code mine}: the query has a {@code prev_mine} column (whether the
     * predecessor is leased, live, by the claimer).
     */
    static List<Candidate> candidates(Query query, boolean mine) {
        return query.map(
                        (rs, ctx) -> {
                            long prev = rs.getLong("prev_seq");
                            Long prevSeq = rs.wasNull() ? null : prev;
                            return new Candidate(
                                    rs.getString("id"),
                                    rs.getLong("seq"),
                                    rs.getString("msg_key"),
                                    prevSeq,
                                    prevSeq != null && mine && rs.getBoolean("prev_mine"),
                                    null);
                        })
                .list();
    }

    /** Puts leased rows back in the order the walk took them. */
    static List<StoredRow> inOrder(List<Candidate> taken, List<StoredRow> rows) {
        Map<String, StoredRow> byId = new HashMap<>();
        for (StoredRow r : rows) {
            byId.put(r.id, r);
        }
        List<StoredRow> ordered = new ArrayList<>(taken.size());
        for (Candidate c : taken) {
            StoredRow r = byId.get(c.id());
            if (r == null) {
                throw new OutboxException(
                        "claim locked "
                                + taken.size()
                                + " rows but leased "
                                + rows.size()
                                + "; the transaction was rolled back");
            }
            ordered.add(r);
        }
        return ordered;
    }

    static List<String> ids(List<Candidate> candidates) {
        List<String> ids = new ArrayList<>(candidates.size());
        for (Candidate c : candidates) {
            ids.add(c.id());
        }
        return ids;
    }

    static List<String> idsOf(List<Receipt> receipts) {
        Set<String> ids = new LinkedHashSet<>();
        for (Receipt r : receipts) {
            ids.add(r.id());
        }
        return new ArrayList<>(ids);
    }

    /** Splits a list into chunks a list statement can bind. */
    static <T> List<List<T>> chunks(List<T> all) {
        List<List<T>> chunks = new ArrayList<>();
        for (int from = 0; from < all.size(); from += LIST_CHUNK) {
            chunks.add(all.subList(from, Math.min(all.size(), from + LIST_CHUNK)));
        }
        return chunks;
    }

    /** The leases and keys of rows a statement returned as {@code id, receipt, msg_key}. */
    static Removed<Receipt.Lease> removedLeases(Query query) {
        return removed(query, (rs, ctx) -> lease(rs));
    }

    /** The ids and keys of rows a statement returned as {@code id, msg_key}. */
    static Removed<String> removedIds(Query query) {
        return removed(query, (rs, ctx) -> rs.getString("id"));
    }

    /**
     * What each row a statement returned names ({@code item}), and the rows' keys ({@code
     * msg_key}).
     */
    private static <T> Removed<T> removed(Query query, RowMapper<T> item) {
        Set<T> items = new HashSet<>();
        Map<String, Integer> keys = new HashMap<>();
        query.map(
                        (rs, ctx) -> {
                            items.add(item.map(rs, ctx));
                            String key = rs.getString("msg_key");
                            if (key != null) {
                                keys.merge(key, 1, Integer::sum);
                            }
                            return key;
                        })
                .list();
        return new Removed<>(items, keys);
    }

    /** The leases of rows a statement returned as {@code id, receipt}. */
    static Set<Receipt.Lease> leases(Query query) {
        return new HashSet<>(query.map((rs, ctx) -> lease(rs)).list());
    }

    /** The lease of a returned row: its {@code id} and {@code receipt} columns. */
    static Receipt.Lease lease(ResultSet rs) throws SQLException {
        return new Receipt.Lease(rs.getString("receipt"), rs.getString("id"));
    }

    /**
     * The condition naming leases exactly for dialects without arrays: the owner, and each (id,
     * receipt) pair. The {@code id IN} list is redundant with the pairs; it lets every planner go
     * through the primary key. Binds {@code :owner}, {@code <ids>} and {@code <pairs>} ({@link
     * #bindLeases}).
     */
    static final String LEASES =
            " WHERE lease_owner = :owner AND dead_at IS NULL AND id IN (<ids>)"
                    + " AND (id, receipt) IN (<pairs>)";

    static <S extends org.jdbi.v3.core.statement.SqlStatement<S>> S bindLeases(
            S statement, String owner, List<Receipt> receipts) {
        StringBuilder pairs = new StringBuilder();
        for (int i = 0; i < receipts.size(); i++) {
            pairs.append(i == 0 ? "" : ", ")
                    .append("(:id")
                    .append(i)
                    .append(", :token")
                    .append(i)
                    .append(')');
            statement
                    .bind("id" + i, receipts.get(i).id())
                    .bind("token" + i, receipts.get(i).token());
        }
        return statement
                .bind("owner", owner)
                .bindList("ids", idsOf(receipts))
                .define("pairs", pairs.toString());
    }
}
