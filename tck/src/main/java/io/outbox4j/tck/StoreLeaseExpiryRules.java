package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Lease expiry"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code LeaseExpiry}.
 */
abstract class StoreLeaseExpiryRules extends StoreRules {
    StoreLeaseExpiryRules(OutboxStoreContract kit) {
        super(kit);
    }

    /**
     * Claims {@code m} as A, lets the lease end, claims it as B; returns {A's delivery, B's
     * delivery}.
     */
    private Delivery[] expireAndReclaim(Message m) {
        committed(m);
        Instant claimedAt = now();
        Delivery first = claimOne(store(), OWNER_A, m);
        advanceTo(claimedAt.plus(LEASE));
        Delivery second = claimOne(secondStore(), OWNER_B, m);
        return new Delivery[] {first, second};
    }

    @Test
    @DisplayName(
            "when a lease ends, the message is claimable again by another claimer with a new receipt")
    void required_expiredLeaseMakesTheMessageClaimableAgain() {
        Message m = message().build();
        Delivery first = leasedByOwnerA(m);
        Instant claimedAt = now();
        advanceTo(claimedAt.plus(LEASE));
        List<Delivery> got = claimAll(secondStore(), OWNER_B);
        assertThat(ids(got))
                .as(
                        "once %s's lease ended at %s, '%s' must be claimable again (a relay that "
                                + "crashed must not lose it), but your store returned %s",
                        OWNER_A, claimedAt.plus(LEASE), m.id(), deliveries(got))
                .containsExactly(m.id());
        assertThat(got.get(0).receipt())
                .as(
                        "the new claim of '%s' must carry a new receipt, but your store "
                                + "reused the expired one",
                        m.id())
                .isNotEqualTo(first.receipt());
        assertSameMessage(m, got.get(0).message());
    }

    @Test
    @DisplayName(
            "every claim counts one more attempt: 1, then +1 after a lease ends, +1 after a release")
    void required_everyClaimCountsOneAttempt() {
        Message m = message().build();
        Delivery first = leasedByOwnerA(m);
        Instant claimedAt = now();
        assertThat(first.attempt())
                .as("the first claim of '%s' must be attempt 1", m.id())
                .isEqualTo(1);
        advanceTo(claimedAt.plus(LEASE));
        Delivery second = claimOne(store(), OWNER_B, m);
        assertAttempt(
                second,
                2,
                "after the first lease ended, the next claim of '%s' must be attempt 2",
                m.id());
        assertReleases(store(), OWNER_B, second, now(), "tck: retry");
        Delivery third = claimOne(store(), OWNER_A, m);
        assertAttempt(
                third, 3, "after a release, the next claim of '%s' must be attempt 3", m.id());
    }

    @Test
    @DisplayName("a stale receipt (lease ended, message claimed again) cannot complete the message")
    void required_staleReceiptCannotComplete() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaim(m);
        Set<String> stale = store().complete(new Completion(OWNER_A, List.of(leases[0].receipt())));
        assertThat(stale)
                .as(
                        "complete by %s with its expired receipt, after %s claimed '%s' again, must "
                                + "report that receipt stale and change nothing, but your store reported %s",
                        OWNER_A, OWNER_B, m.id(), stale)
                .containsExactly(leases[0].receipt());
        assertCompletes(
                secondStore(),
                OWNER_B,
                leases[1],
                "a stale complete by another owner changed nothing");
    }

    @Test
    @DisplayName("a stale receipt cannot release the message")
    void required_staleReceiptCannotRelease() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaim(m);
        boolean released =
                store().release(new Release(OWNER_A, leases[0].receipt(), now(), "tck: stale"));
        assertThat(released)
                .as(
                        "release by %s with its expired receipt, after %s claimed '%s' again, must "
                                + "return false (stale), but your store returned true",
                        OWNER_A, OWNER_B, m.id())
                .isFalse();
        assertNothingClaimable(
                store(),
                OWNER_B,
                "the stale release must not have cleared "
                        + OWNER_B
                        + "'s live lease on '"
                        + m.id()
                        + "'");
        assertCompletes(
                secondStore(),
                OWNER_B,
                leases[1],
                "a stale release by another owner changed nothing");
    }

    @Test
    @DisplayName("a stale receipt cannot dead-letter the message")
    void required_staleReceiptCannotDeadLetter() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaim(m);
        boolean parked =
                store().deadLetter(
                                new DeadLetter(OWNER_A, leases[0].receipt(), "tck: stale", now()));
        assertThat(parked)
                .as(
                        "deadLetter by %s with its expired receipt, after %s claimed '%s' again, must "
                                + "return false (stale), but your store returned true",
                        OWNER_A, OWNER_B, m.id())
                .isFalse();
        assertThat(deadLetterReason(m.id()))
                .as("a stale deadLetter must not record a reason for '%s'", m.id())
                .isEmpty();
        assertCompletes(
                secondStore(),
                OWNER_B,
                leases[1],
                "a stale deadLetter by another owner changed nothing");
    }

    /**
     * Claims {@code m} as A, lets the lease end, claims it again as A; returns {the old delivery,
     * the new one}.
     */
    private Delivery[] expireAndReclaimBySameOwner(Message m) {
        committed(m);
        Instant claimedAt = now();
        Delivery first = claimOne(store(), OWNER_A, m);
        advanceTo(claimedAt.plus(LEASE));
        Delivery second = claimOne(secondStore(), OWNER_A, m);
        return new Delivery[] {first, second};
    }

    private String sameOwnerReclaimed(Message m) {
        return "after "
                + OWNER_A
                + "'s lease on '"
                + m.id()
                + "' ended and "
                + OWNER_A
                + " claimed it again, the old receipt is stale although the owner is the same"
                + " (every write must compare the receipt, not only the owner)";
    }

    @Test
    @DisplayName(
            "an owner that claimed a message again after its lease ended cannot complete it with the old receipt")
    void required_sameOwnersOldReceiptCannotComplete() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaimBySameOwner(m);
        Set<String> stale = store().complete(new Completion(OWNER_A, List.of(leases[0].receipt())));
        assertThat(stale)
                .as(
                        "complete with the old receipt must report it stale: %s; but your store"
                                + " reported %s",
                        sameOwnerReclaimed(m), stale)
                .containsExactly(leases[0].receipt());
        assertCompletes(store(), OWNER_A, leases[1], "the new lease is live");
    }

    @Test
    @DisplayName(
            "an owner that claimed a message again after its lease ended cannot release it with the old receipt")
    void required_sameOwnersOldReceiptCannotRelease() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaimBySameOwner(m);
        assertThat(store().release(new Release(OWNER_A, leases[0].receipt(), now(), "tck: stale")))
                .as(
                        "release with the old receipt must return false: %s; but your store"
                                + " returned true",
                        sameOwnerReclaimed(m))
                .isFalse();
        assertNothingClaimable(
                store(),
                OWNER_B,
                "the stale release must not have cleared the new lease on '" + m.id() + "'");
        assertCompletes(store(), OWNER_A, leases[1], "the new lease is live");
    }

    @Test
    @DisplayName(
            "an owner that claimed a message again after its lease ended cannot dead-letter it with the old receipt")
    void required_sameOwnersOldReceiptCannotDeadLetter() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaimBySameOwner(m);
        assertThat(
                        store().deadLetter(
                                        new DeadLetter(
                                                OWNER_A, leases[0].receipt(), "tck: stale", now())))
                .as(
                        "deadLetter with the old receipt must return false: %s; but your store"
                                + " returned true",
                        sameOwnerReclaimed(m))
                .isFalse();
        assertCompletes(store(), OWNER_A, leases[1], "the new lease is live");
    }

    @Test
    @DisplayName(
            "an owner that claimed a message again after its lease ended cannot extend the new lease with the old receipt")
    void required_sameOwnersOldReceiptCannotExtend() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaimBySameOwner(m);
        Instant reclaimedAt = now();
        Instant tomorrow = now().plus(Duration.ofDays(1));
        Set<String> stale =
                store().extend(new Extension(OWNER_A, List.of(leases[0].receipt()), tomorrow));
        assertThat(stale)
                .as(
                        "extend with the old receipt must report it stale and extend nothing: %s;"
                                + " but your store reported %s",
                        sameOwnerReclaimed(m), stale)
                .containsExactly(leases[0].receipt());
        advanceTo(reclaimedAt.plus(LEASE));
        List<Delivery> got = claimAll(secondStore(), OWNER_B);
        assertThat(ids(got))
                .as(
                        "the new lease on '%s' ends at %s, because the extend to %s with the old"
                                + " receipt was stale; so it must be claimable then, but your store"
                                + " returned %s",
                        m.id(), reclaimedAt.plus(LEASE), tomorrow, deliveries(got))
                .containsExactly(m.id());
    }

    @Test
    @DisplayName(
            "an owner that claimed a message again after its lease ended cannot abandon it with the old receipt")
    void required_sameOwnersOldReceiptCannotAbandon() {
        Message m = message().build();
        Delivery[] leases = expireAndReclaimBySameOwner(m);
        Set<String> stale = store().abandon(new Abandonment(OWNER_A, List.of(leases[0].receipt())));
        assertThat(stale)
                .as(
                        "abandon with the old receipt must report it stale and change nothing: %s;"
                                + " but your store reported %s",
                        sameOwnerReclaimed(m), stale)
                .containsExactly(leases[0].receipt());
        assertNothingClaimable(
                store(),
                OWNER_B,
                "the stale abandon must not have given back the new lease on '" + m.id() + "'");
        assertCompletes(store(), OWNER_A, leases[1], "the new lease is live");
    }
}
