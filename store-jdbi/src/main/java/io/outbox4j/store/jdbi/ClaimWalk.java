package io.outbox4j.store.jdbi;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The decision of one claim over the pages it reads, in claim order (docs/per-key-order.md, step
 * 3): an unkeyed row is taken; a keyed row is taken when nothing precedes it or its predecessor was
 * taken earlier in this claim, and parked otherwise. Taking stops at the limit; rows after it are
 * left as they are.
 */
final class ClaimWalk {
    private final int limit;
    private final Set<Long> takenSeqs = new HashSet<>();

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
            if (full()) {
                break;
            }
            if (c.key() == null || c.prevSeq() == null || takenSeqs.contains(c.prevSeq())) {
                takenSeqs.add(c.seq());
                taken.add(c);
            } else {
                parked.add(c);
            }
        }
        return new Step(taken, parked);
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
}
