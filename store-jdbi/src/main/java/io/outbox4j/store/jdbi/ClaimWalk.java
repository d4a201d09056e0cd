package io.outbox4j.store.jdbi;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The decision of one claim over the pages it reads, in claim order (docs/per-key-order.md, step
 * 3): an unkeyed row is taken; a keyed row is taken when nothing precedes it or its predecessor was
 * taken earlier in this claim; in a member's claim, a row whose predecessor the member itself holds
 * (a live lease of its own), and up to {@link #SKIP_DEPTH} rows of that key behind it, are skipped,
 * neither taken nor parked: the claimer cannot start them before its own message is done, and its
 * completion makes them claimable again without an unpark; any other blocked row is parked (so a
 * key's deep backlog still leaves the claim index and does not hide other keys; in a claim of every
 * bucket, which shares its rows with other claimers, every blocked row is parked: another claimer
 * would park the rows it left). Taking stops at the limit, and the walk stops once it has skipped
 * as many rows as the limit (a claimer that mostly meets the next messages of its own keys has
 * nothing to start and waits for its completions); rows after that are left as they are.
 */
final class ClaimWalk {
    /** The most rows of one key a walk skips behind the claimer's own lease; rows beyond park. */
    static final int SKIP_DEPTH = 4;

    private final int limit;
    private final boolean member;
    private final Set<Long> takenSeqs = new HashSet<>();
    private final Set<Long> skippedSeqs = new HashSet<>();
    private final Map<String, Integer> skippedOfKey = new HashMap<>();

    /**
     * @param limit the most rows the claim takes
     * @param member whether the claim is a member's (only its buckets): rows behind its own leases
     *     are then skipped
     */
    ClaimWalk(int limit, boolean member) {
        this.limit = limit;
        this.member = member;
    }

    /**
     * A walk that starts where this one is now and goes on apart from it. A claim transaction the
     * database aborts (a deadlock, a lock timeout) is tried again from a copy of the walk as it was
     * before that transaction: what the aborted try took was rolled back, and a row behind a
     * predecessor it took must not pass for a follower of a row taken in this claim.
     */
    ClaimWalk copy() {
        ClaimWalk c = new ClaimWalk(limit, member);
        c.takenSeqs.addAll(takenSeqs);
        c.skippedSeqs.addAll(skippedSeqs);
        c.skippedOfKey.putAll(skippedOfKey);
        return c;
    }

    /** What one page decided: the rows to lease and the rows to park, each in claim order. */
    record Step(List<Candidate> taken, List<Candidate> parked) {}

    /**
     * Walks the next page.
     *
     * @param page candidates in claim order
     * @return the rows of this page to lease and to park
     */
    Step next(List<Candidate> page) {
        List<Candidate> taken = new ArrayList<>();
        List<Candidate> parked = new ArrayList<>();
        for (Candidate c : page) {
            if (full() || stopped()) {
                break;
            }
            if (c.key() == null || c.prevSeq() == null || takenSeqs.contains(c.prevSeq())) {
                takenSeqs.add(c.seq());
                taken.add(c);
            } else if (!skipped(c)) {
                parked.add(c);
            }
        }
        return new Step(taken, parked);
    }

    /**
     * Skips the row if its predecessor is the claimer's own live lease, or a row this walk skipped,
     * while fewer than {@link #SKIP_DEPTH} rows of its key were skipped.
     *
     * @return whether it was skipped
     */
    boolean skipped(Candidate c) {
        if (!member) {
            return false;
        }
        if (skippedSeqs.contains(c.seq())) {
            return true; // read again on a later page
        }
        boolean behindMine = c.prevMine() || skippedSeqs.contains(c.prevSeq());
        if (!behindMine || skippedOfKey.getOrDefault(c.key(), 0) >= SKIP_DEPTH) {
            return false;
        }
        skippedOfKey.merge(c.key(), 1, Integer::sum);
        skippedSeqs.add(c.seq());
        return true;
    }

    /** The most rows the claim takes, also the page size. */
    int limit() {
        return limit;
    }

    /** Counts a row this claim leased without the walk (a dialect's fast path took it). */
    void took(long seq) {
        takenSeqs.add(seq);
    }

    /** Whether the claim has taken {@code limit} rows. */
    boolean full() {
        return takenSeqs.size() >= limit;
    }

    /** Whether the walk has skipped {@code limit} rows behind the claimer's own leases. */
    boolean stopped() {
        return skippedSeqs.size() >= limit;
    }
}
