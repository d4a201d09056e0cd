package io.outbox4j.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BucketsTest {
    private static final Random RANDOM = new Random(20261205);

    private static List<String> members(int n) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add("relay-" + Long.toHexString(RANDOM.nextLong()));
        }
        return names;
    }

    private static String[] owners(Map<String, List<Integer>> assignment) {
        String[] owner = new String[Buckets.COUNT];
        assignment.forEach((m, buckets) -> buckets.forEach(b -> owner[b] = m));
        return owner;
    }

    private static int moved(List<String> before, List<String> after) {
        String[] a = owners(Buckets.assign(before));
        String[] b = owners(Buckets.assign(after));
        int moved = 0;
        for (int i = 0; i < Buckets.COUNT; i++) {
            if (!a[i].equals(b[i])) {
                moved++;
            }
        }
        return moved;
    }

    @Test
    void aKeysBucketIsTheFirstByteOfTheMd5OfItsUtf8Bytes() {
        assertThat(Buckets.of("")).isEqualTo(0xd4); // md5("") = d41d8cd9…
        assertThat(Buckets.of("a")).isEqualTo(0x0c); // md5("a") = 0cc175b9…
    }

    @Test
    void everyBucketHasOneOwner_andNoMemberOwnsMoreThanItsShare() {
        for (int n = 1; n <= 12; n++) {
            List<String> names = members(n);
            Map<String, List<Integer>> assignment = Buckets.assign(names);
            int share = (Buckets.COUNT + n - 1) / n;

            assertThat(assignment).containsOnlyKeys(names);
            List<Integer> all = new ArrayList<>();
            assignment.values().forEach(all::addAll);
            Collections.sort(all);
            assertThat(all).hasSize(Buckets.COUNT).doesNotHaveDuplicates();
            assertThat(assignment.values())
                    .as("%d members: each owns at most its share %d, in ascending order", n, share)
                    .allSatisfy(b -> assertThat(b).hasSizeLessThanOrEqualTo(share).isSorted());
            for (int b = 0; b < Buckets.COUNT; b += 17) {
                assertThat(assignment.get(Buckets.owner(b, names))).contains(b);
            }
        }
    }

    @Test
    void theAssignmentDependsOnTheSetOfMembersOnly() {
        List<String> names = members(5);
        List<String> shuffled = new ArrayList<>(names);
        Collections.shuffle(shuffled, RANDOM);
        shuffled.add(names.get(0)); // a duplicate changes nothing either

        assertThat(Buckets.assign(shuffled)).isEqualTo(Buckets.assign(names));
    }

    @Test
    void aJoinOrALeaveMovesAboutOneBucketInR() {
        for (int n = 1; n <= 8; n++) {
            int joins = 0;
            int leaves = 0;
            int rounds = 60;
            for (int round = 0; round < rounds; round++) {
                List<String> names = members(n);
                List<String> joined = new ArrayList<>(names);
                joined.add("joiner-" + round);
                joins += moved(names, joined);
                if (n > 1) {
                    leaves += moved(names, names.subList(1, n));
                }
            }
            double idealJoin = (double) Buckets.COUNT / (n + 1);
            assertThat(joins / (double) rounds)
                    .as("buckets moved by a join to %d members (ideal %.1f)", n, idealJoin)
                    .isGreaterThanOrEqualTo(idealJoin * 0.9)
                    .isLessThanOrEqualTo(idealJoin * 1.3);
            if (n > 1) {
                double idealLeave = (double) Buckets.COUNT / n;
                assertThat(leaves / (double) rounds)
                        .as("buckets moved by a leave from %d members (ideal %.1f)", n, idealLeave)
                        .isGreaterThanOrEqualTo(idealLeave * 0.9)
                        .isLessThanOrEqualTo(idealLeave * 1.3);
            }
        }
    }

    @Test
    void aLeaveKeepsMostBucketsOfTheMembersThatStayWithThem() {
        List<String> names = members(4);
        Map<String, List<Integer>> before = Buckets.assign(names);
        Map<String, List<Integer>> after = Buckets.assign(names.subList(0, 3));
        Set<Integer> leaversBuckets = new HashSet<>(before.get(names.get(3)));
        int stayedPut = 0;
        for (String m : names.subList(0, 3)) {
            for (int b : before.get(m)) {
                if (after.get(m).contains(b)) {
                    stayedPut++;
                }
            }
        }
        assertThat(stayedPut)
                .as("buckets of the members that stay which stayed with them")
                .isGreaterThanOrEqualTo((Buckets.COUNT - leaversBuckets.size()) * 8 / 10);
    }

    @Test
    void refusesNoMembersAndANullMember() {
        assertThatThrownBy(() -> Buckets.assign(List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("members must not be empty");
        List<String> withNull = new ArrayList<>(List.of("a"));
        withNull.add(null);
        assertThatThrownBy(() -> Buckets.assign(withNull))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("member");
        assertThatThrownBy(() -> Buckets.owner(256, List.of("a")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bucket must be 0 to 255, but was 256");
    }
}
