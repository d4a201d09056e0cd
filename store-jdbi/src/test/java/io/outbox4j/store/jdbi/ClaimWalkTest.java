package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The claim's decision over a page (docs/per-key-order.md, step 3); no database needed. */
class ClaimWalkTest {
    private static Candidate unkeyed(long seq) {
        return new Candidate("u" + seq, seq, null, null, false, null);
    }

    private static Candidate keyed(long seq, String key, Long prev) {
        return new Candidate("k" + seq, seq, key, prev, false, null);
    }

    /** A row whose predecessor {@code prev} is the claimer's own live lease. */
    private static Candidate behindMine(long seq, String key, long prev) {
        return new Candidate("k" + seq, seq, key, prev, true, null);
    }

    private static List<Long> seqs(List<Candidate> candidates) {
        return candidates.stream().map(Candidate::seq).toList();
    }

    @Test
    void unkeyedRowsAndRowsNothingPrecedes_areTaken() {
        ClaimWalk.Step step =
                new ClaimWalk(10).next(List.of(unkeyed(1), keyed(2, "a", null), unkeyed(3)));
        assertThat(seqs(step.taken())).containsExactly(1L, 2L, 3L);
        assertThat(step.parked()).isEmpty();
    }

    @Test
    void followerOfARowTakenEarlierInTheClaim_isTaken_evenOnALaterPage() {
        ClaimWalk walk = new ClaimWalk(10);
        ClaimWalk.Step first = walk.next(List.of(keyed(1, "a", null), keyed(5, "a", 1L)));
        assertThat(seqs(first.taken())).containsExactly(1L, 5L);
        ClaimWalk.Step second = walk.next(List.of(keyed(9, "a", 5L)));
        assertThat(seqs(second.taken())).containsExactly(9L);
    }

    @Test
    void followerOfARowNotTaken_orTakenOnlyLaterInThePage_isParked() {
        ClaimWalk.Step step =
                new ClaimWalk(10)
                        .next(
                                List.of(
                                        keyed(7, "a", 3L), // 3 is leased elsewhere
                                        keyed(8, "b", 6L), // 6 comes later in this page
                                        keyed(6, "b", null),
                                        keyed(9, "a", 7L))); // behind the parked 7
        assertThat(seqs(step.taken())).containsExactly(6L);
        assertThat(seqs(step.parked())).containsExactly(7L, 8L, 9L);
    }

    @Test
    void rowsAfterTheLimit_areNeitherTakenNorParked() {
        ClaimWalk walk = new ClaimWalk(2);
        ClaimWalk.Step step =
                walk.next(List.of(unkeyed(1), keyed(2, "a", 99L), unkeyed(3), keyed(4, "b", 98L)));
        assertThat(seqs(step.taken())).containsExactly(1L, 3L);
        assertThat(seqs(step.parked())).containsExactly(2L);
        assertThat(walk.full()).isTrue();
    }

    @Test
    void rowsAFastPathTook_countAsTakenEarlierInTheClaim() {
        ClaimWalk walk = new ClaimWalk(10);
        walk.took(4);
        ClaimWalk.Step step = walk.next(List.of(keyed(12, "a", 4L)));
        assertThat(seqs(step.taken())).containsExactly(12L);
    }

    @Test
    void theNextRowOfAKeyTheClaimerHolds_isSkipped_notParked_andRowsBehindItAreParked() {
        ClaimWalk walk = new ClaimWalk(10);
        ClaimWalk.Step step =
                walk.next(
                        List.of(
                                behindMine(5, "a", 1L), // 1 is leased by the claimer itself
                                keyed(6, "a", 5L), // behind the skipped 5: parked
                                keyed(7, "b", 2L), // 2 is leased by another owner
                                unkeyed(8)));
        assertThat(seqs(step.taken())).containsExactly(8L);
        assertThat(seqs(step.parked())).containsExactly(6L, 7L);
        assertThat(walk.stopped()).isFalse();
    }

    @Test
    void aWalkThatSkippedAsManyRowsAsItsLimit_stops() {
        ClaimWalk walk = new ClaimWalk(2);
        ClaimWalk.Step step =
                walk.next(
                        List.of(
                                behindMine(5, "a", 1L),
                                behindMine(6, "b", 2L),
                                unkeyed(7),
                                keyed(8, "c", 3L)));
        assertThat(step.taken()).isEmpty();
        assertThat(step.parked()).isEmpty();
        assertThat(walk.stopped()).isTrue();
    }
}
