package io.outbox4j.store.jdbi;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The decision of one claim over the pages it reads, in claim order (docs/per-key-order.md, step
 * 3): an unkeyed row is taken; a keyed row is taken when nothing precedes it or its predecessor was
 * taken earlier in this claim; a row whose predecessor the claimer itself holds (a live lease of
 * its own) is skipped, neither taken nor parked: the claimer cannot start it before its own
 * predecessor is done, and its completion makes it claimable again without an unpark; any other
 * blocked row is parked. Taking stops at the limit, and the walk stops once it has skipped as many
 * rows as the limit (a claimer that mostly meets the next messages of its own keys has nothing to
 * start and waits for its completions); rows after that are left as they are.
 */
final class ClaimWalk {
    private final int limit;
    private final Set<Long> takenSeqs = new HashSet<>();
    private final Set<Long> skippedSeqs = new HashSet<>();

    ClaimWalk(int limit) {
        this.limit = limit;
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
     * Skips the row if its predecessor is the claimer's own live lease.
     *
     * @return whether it was skipped
     */
    boolean skipped(Candidate c) {
        if (!c.prevMine()) {
            return false;
        }
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
