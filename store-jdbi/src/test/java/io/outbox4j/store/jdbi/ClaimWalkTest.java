package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
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
                new ClaimWalk(10, true).next(List.of(unkeyed(1), keyed(2, "a", null), unkeyed(3)));
        assertThat(seqs(step.taken())).containsExactly(1L, 2L, 3L);
        assertThat(step.parked()).isEmpty();
    }

    @Test
    void followerOfARowTakenEarlierInTheClaim_isTaken_evenOnALaterPage() {
        ClaimWalk walk = new ClaimWalk(10, true);
        ClaimWalk.Step first = walk.next(List.of(keyed(1, "a", null), keyed(5, "a", 1L)));
        assertThat(seqs(first.taken())).containsExactly(1L, 5L);
        ClaimWalk.Step second = walk.next(List.of(keyed(9, "a", 5L)));
        assertThat(seqs(second.taken())).containsExactly(9L);
    }

    @Test
    void followerOfARowNotTaken_orTakenOnlyLaterInThePage_isParked() {
        ClaimWalk.Step step =
                new ClaimWalk(10, true)
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
        ClaimWalk walk = new ClaimWalk(2, true);
        ClaimWalk.Step step =
                walk.next(List.of(unkeyed(1), keyed(2, "a", 99L), unkeyed(3), keyed(4, "b", 98L)));
        assertThat(seqs(step.taken())).containsExactly(1L, 3L);
        assertThat(seqs(step.parked())).containsExactly(2L);
        assertThat(walk.full()).isTrue();
    }

    @Test
    void rowsAFastPathTook_countAsTakenEarlierInTheClaim() {
        ClaimWalk walk = new ClaimWalk(10, true);
        walk.took(4);
        ClaimWalk.Step step = walk.next(List.of(keyed(12, "a", 4L)));
        assertThat(seqs(step.taken())).containsExactly(12L);
    }

    @Test
    void rowsBehindAKeyTheClaimerHolds_areSkipped_upToTheDepth_thenParked() {
        ClaimWalk walk = new ClaimWalk(20, true);
        List<Candidate> page = new ArrayList<>();
        page.add(behindMine(5, "a", 1L)); // 1 is leased by the claimer itself
        for (long seq = 6; seq < 6 + ClaimWalk.SKIP_DEPTH; seq++) {
            page.add(keyed(seq, "a", seq - 1)); // behind the skipped rows
        }
        page.add(keyed(50, "b", 2L)); // 2 is leased by another owner
        page.add(unkeyed(51));
        ClaimWalk.Step step = walk.next(page);
        assertThat(seqs(step.taken())).containsExactly(51L);
        assertThat(seqs(step.parked()))
                .as("the row past the skip depth, and the row behind another owner's lease")
                .containsExactly(5L + ClaimWalk.SKIP_DEPTH, 50L);
        assertThat(walk.next(List.of(behindMine(5, "a", 1L))).parked())
                .as("a skipped row read again on a later page is still skipped")
                .isEmpty();
        assertThat(walk.stopped()).isFalse();
    }

    @Test
    void aWalkThatSkippedAsManyRowsAsItsLimit_stops() {
        ClaimWalk walk = new ClaimWalk(2, true);
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

    @Test
    void aClaimOfEveryBucket_parksRowsBehindItsOwnLeasesToo() {
        ClaimWalk walk = new ClaimWalk(10, false);
        ClaimWalk.Step step = walk.next(List.of(behindMine(5, "a", 1L), keyed(6, "a", 5L)));
        assertThat(seqs(step.parked())).containsExactly(5L, 6L);
    }
}
