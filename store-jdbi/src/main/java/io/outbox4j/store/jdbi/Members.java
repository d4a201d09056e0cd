package io.outbox4j.store.jdbi;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.OutboxMembership;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * The membership side ({@link OutboxMembership}) over the members and bucket-owner tables
 * (docs/scale-out.md). A member's own lease is extended by a statement that locks nothing else; the
 * assignment of the buckets is written only under the outbox's membership lock ({@link
 * SqlDialect#lockMembership}), so assignments are serialised, and leases are judged by the
 * database's clock ({@link SqlDialect#dbNow}) read after that lock.
 */
final class Members {
    private static final System.Logger LOG = System.getLogger(Members.class.getName());

    private final SqlDialect d;
    private final Db db;
    private final String readOwners;
    private final String now;
    private final String prune;
    private final String extend;
    private final String join;
    private final String leave;
    private final String live;
    private final String setOwner;
    private final String addBucket;
    private final String all;

    /** The least time between two sweeps for orphaned parked rows by this store instance. */
    static final Duration SWEEP_EVERY = Duration.ofSeconds(30);

    /** The most rows one sweep unparks. */
    static final int SWEEP_LIMIT = 1000;

    private volatile long nextSweepNanos = System.nanoTime();

    Members(SqlDialect dialect, Db db) {
        this.d = dialect;
        this.db = db;
        this.readOwners = "SELECT bucket, owner FROM " + d.bucketsTable;
        this.now = "SELECT " + d.dbNow;
        this.prune = "DELETE FROM " + d.membersTable + " WHERE lease_until <= :now";
        this.extend =
                "UPDATE " + d.membersTable + " SET lease_until = :until WHERE member_id = :member";
        this.join =
                "INSERT INTO "
                        + d.membersTable
                        + " (member_id, lease_until) VALUES (:member, :until)";
        this.leave = "DELETE FROM " + d.membersTable + " WHERE member_id = :member";
        this.live = "SELECT member_id FROM " + d.membersTable + " WHERE lease_until > :now";
        this.setOwner = "UPDATE " + d.bucketsTable + " SET owner = :owner WHERE bucket = :bucket";
        this.addBucket =
                "INSERT INTO " + d.bucketsTable + " (bucket, owner) VALUES (:bucket, NULL)";
        this.all = "SELECT member_id, lease_until FROM " + d.membersTable;
    }

    /**
     * Renews in two steps. First this member's own row, in a statement of its own that locks
     * nothing else, so that a renewal another member is stuck in (paused, partitioned) never lets
     * this one lapse. Then, in a transaction that holds the outbox's membership lock (taken without
     * waiting, and cut off by PostgreSQL if its client goes silent), lapsed members are dropped and
     * the buckets assigned over the live ones; when another member holds that lock, this renewal
     * leaves the assignment to it (or to the next renewal) and reports the buckets as they are.
     */
    Membership renew(String member, Duration lease) {
        OutboxMembership.check(member, lease);
        boolean extended =
                db.statement(
                        "renew membership",
                        h -> {
                            Instant at = dbNow(h);
                            return h.createUpdate(extend)
                                            .bind("member", member)
                                            .bind("until", d.time(until(at, lease)))
                                            .execute()
                                    == 1;
                        });
        Membership renewed =
                db.transaction(
                        "renew membership",
                        h -> {
                            d.beginMembership(h);
                            boolean locked = d.lockMembership(h, false);
                            Instant at = dbNow(h);
                            Instant until = until(at, lease);
                            if (!extended) {
                                join(h, member, until);
                            }
                            String[] owners = owners(h, locked);
                            if (locked) {
                                h.createUpdate(prune).bind("now", d.time(at)).execute();
                            }
                            List<String> members = liveMembers(h, at);
                            int moved = locked ? assign(h, owners, members) : 0;
                            List<Integer> mine = new ArrayList<>();
                            for (int b = 0; b < Buckets.COUNT; b++) {
                                if (member.equals(owners[b])) {
                                    mine.add(b);
                                }
                            }
                            return new Membership(member, mine, members, until, at, moved);
                        });
        sweep(renewed.buckets());
        return renewed;
    }

    private static Instant until(Instant at, Duration lease) {
        return at.plus(lease).truncatedTo(ChronoUnit.MICROS);
    }

    /** Records a member that has no row (its first renewal, or after it was dropped). */
    private void join(Handle h, String member, Instant until) {
        if (h.createUpdate(extend).bind("member", member).bind("until", d.time(until)).execute()
                == 0) {
            h.createUpdate(join).bind("member", member).bind("until", d.time(until)).execute();
        }
    }

    /**
     * At most every {@link #SWEEP_EVERY} per store instance, unparks orphaned parked rows of the
     * renewing member's buckets (see {@link SqlDialect#unparkOrphans}); a failure is left to the
     * next sweep.
     */
    private void sweep(List<Integer> buckets) {
        long now = System.nanoTime();
        if (buckets.isEmpty() || now - nextSweepNanos < 0) {
            return;
        }
        nextSweepNanos = now + SWEEP_EVERY.toNanos();
        try {
            int unparked =
                    db.statement("unpark orphans", h -> d.unparkOrphans(h, buckets, SWEEP_LIMIT));
            if (unparked > 0) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "unparked {0} rows of {1} that waited behind nothing (parked by a relay of"
                                + " an older version during a rolling upgrade?)",
                        unparked,
                        d.tableName);
            }
        } catch (RuntimeException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "the sweep for rows parked behind nothing failed on {0}; the next renewal"
                            + " after {1} tries again: {2}",
                    d.tableName,
                    SWEEP_EVERY,
                    e.toString());
        }
    }

    void leave(String member) {
        Objects.requireNonNull(member, "member");
        db.transaction(
                "leave",
                h -> {
                    d.beginMembership(h);
                    d.lockMembership(h, true);
                    String[] owners = owners(h, true);
                    if (h.createUpdate(leave).bind("member", member).execute() == 0) {
                        return null;
                    }
                    Instant at = dbNow(h);
                    h.createUpdate(prune).bind("now", d.time(at)).execute();
                    assign(h, owners, liveMembers(h, at));
                    return null;
                });
    }

    List<Member> members() {
        return db.transaction(
                "list members",
                h -> {
                    Instant at = dbNow(h);
                    String[] owners = new String[Buckets.COUNT];
                    readOwners(h, owners);
                    Map<String, Integer> owned = new TreeMap<>();
                    for (String owner : owners) {
                        if (owner != null) {
                            owned.merge(owner, 1, Integer::sum);
                        }
                    }
                    Map<String, Instant> leases = new TreeMap<>();
                    h.createQuery(all)
                            .map((rs, ctx) -> leases.put(rs.getString(1), d.requireTime(rs, 2)))
                            .list();
                    List<Member> out = new ArrayList<>(leases.size());
                    leases.forEach(
                            (id, until) ->
                                    out.add(
                                            new Member(
                                                    id,
                                                    until,
                                                    until.isAfter(at),
                                                    owned.getOrDefault(id, 0))));
                    return out;
                });
    }

    /** Removes every member and every bucket owner: for tests that reset the outbox. */
    void clear() {
        db.transaction(
                "clear members",
                h -> {
                    h.execute("DELETE FROM " + d.membersTable);
                    h.execute("UPDATE " + d.bucketsTable + " SET owner = NULL");
                    return null;
                });
    }

    /**
     * The owner of every bucket. A caller holding the membership lock first inserts the rows a
     * table created without them lacks.
     */
    private String[] owners(Handle h, boolean locked) {
        String[] owners = new String[Buckets.COUNT];
        BitSet found = readOwners(h, owners);
        if (found.cardinality() < Buckets.COUNT && locked) {
            PreparedBatch batch = h.prepareBatch(addBucket);
            for (int b = found.nextClearBit(0); b < Buckets.COUNT; b = found.nextClearBit(b + 1)) {
                batch.bind("bucket", b).add();
            }
            batch.execute();
        }
        return owners;
    }

    /** Fills {@code owners} from the bucket-owner table; returns the buckets it has a row for. */
    private BitSet readOwners(Handle h, String[] owners) {
        BitSet found = new BitSet(Buckets.COUNT);
        h.createQuery(readOwners)
                .map(
                        (rs, ctx) -> {
                            int b = rs.getInt(1);
                            if (b >= 0 && b < Buckets.COUNT) {
                                owners[b] = rs.getString(2);
                                found.set(b);
                            }
                            return b;
                        })
                .list();
        return found;
    }

    private Instant dbNow(Handle h) {
        return h.createQuery(now).map((rs, ctx) -> d.requireTime(rs, 1)).one();
    }

    private List<String> liveMembers(Handle h, Instant at) {
        return new ArrayList<>(
                new TreeSet<>(
                        h.createQuery(live).bind("now", d.time(at)).mapTo(String.class).list()));
    }

    /**
     * Writes the rendezvous assignment over the live members (no owner when there is none) where it
     * differs from {@code owners}, and updates {@code owners}.
     *
     * @return how many buckets changed owner
     */
    private int assign(Handle h, String[] owners, Collection<String> members) {
        String[] next = new String[Buckets.COUNT];
        if (!members.isEmpty()) {
            Buckets.assign(members).forEach((m, buckets) -> buckets.forEach(b -> next[b] = m));
        }
        PreparedBatch batch = h.prepareBatch(setOwner);
        int moved = 0;
        for (int b = 0; b < Buckets.COUNT; b++) {
            if (!Objects.equals(owners[b], next[b])) {
                batch.bind("owner", next[b]).bind("bucket", b).add();
                owners[b] = next[b];
                moved++;
            }
        }
        if (moved > 0) {
            batch.execute();
        }
        return moved;
    }
}
