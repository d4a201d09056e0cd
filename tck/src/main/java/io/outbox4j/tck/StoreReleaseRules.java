package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Release"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code ReleaseRules}.
 */
abstract class StoreReleaseRules extends StoreRules {
    StoreReleaseRules(OutboxStoreContract kit) {
        super(kit);
    }

    @Test
    @DisplayName(
            "a released message stays hidden until availableAt, then is claimable with a new receipt")
    void required_releaseHidesTheMessageUntilAvailableAt() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        Instant claimedAt = now();
        Instant retryAt = claimedAt.plus(Duration.ofMinutes(10));
        assertReleases(store(), OWNER_A, d, retryAt, "tck: broker down");
        String released = "'" + m.id() + "' was released with availableAt=" + retryAt;
        assertNothingClaimable(store(), OWNER_B, released + " (10 minutes later)");
        advanceTo(claimedAt.plus(LEASE).plus(Duration.ofMinutes(1)));
        assertNothingClaimable(
                store(), OWNER_B, released + ", which is later than the end of the lease it had");
        advanceTo(retryAt.minusMillis(1));
        assertNothingClaimable(
                store(),
                OWNER_B,
                "'" + m.id() + "' is released until " + retryAt + ", 1 ms " + "later");
        advanceTo(retryAt);
        Delivery again = claimOne(secondStore(), OWNER_B, m);
        assertThat(again.receipt())
                .as("the claim after a release must carry a new receipt")
                .isNotEqualTo(d.receipt());
        assertSameMessage(m, again.message());
    }

    @Test
    @DisplayName(
            "a release clears the lease: with availableAt now, another claimer gets the message at once")
    void required_releaseClearsTheLease() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertReleases(store(), OWNER_A, d, now(), "tck: retry now");
        List<Delivery> got = claimAll(secondStore(), OWNER_B);
        assertThat(ids(got))
                .as(
                        "after a release with availableAt=now, '%s' must be claimable at once (the "
                                + "release ends the lease), but your store returned %s",
                        m.id(), deliveries(got))
                .containsExactly(m.id());
    }

    @Test
    @DisplayName(
            "the receipt of a released lease is stale: it can neither complete nor release again")
    void required_releasedReceiptIsStale() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertReleases(store(), OWNER_A, d, now(), "tck: retry");
        Set<String> stale = store().complete(new Completion(OWNER_A, List.of(d.receipt())));
        assertThat(stale)
                .as(
                        "complete with the receipt of a released lease must report it stale, but your "
                                + "store reported %s",
                        stale)
                .containsExactly(d.receipt());
        Instant tomorrow = now().plus(Duration.ofDays(1));
        assertThat(store().release(new Release(OWNER_A, d.receipt(), tomorrow, "tck: twice")))
                .as(
                        "a second release with the same receipt must return false (stale), but your store "
                                + "returned true")
                .isFalse();
        List<Delivery> got = claimAll(store(), OWNER_B);
        assertThat(ids(got))
                .as(
                        "'%s' was released with availableAt=now; the stale complete and the stale "
                                + "release (availableAt=%s) must have changed nothing, so it must be claimable now, but your "
                                + "store returned %s",
                        m.id(), tomorrow, deliveries(got))
                .containsExactly(m.id());
    }

    @Test
    @DisplayName("release by a foreign owner, or with an unknown receipt, changes nothing")
    void required_releaseWithAForeignOwnerOrUnknownReceiptChangesNothing() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertThat(store().release(new Release(OWNER_B, d.receipt(), now(), "tck: foreign")))
                .as(
                        "release by %s of a receipt that %s holds must return false (stale), but your store "
                                + "returned true",
                        OWNER_B, OWNER_A)
                .isFalse();
        assertThat(store().release(new Release(OWNER_A, UNKNOWN_RECEIPT, now(), "tck: unknown")))
                .as(
                        "release with a receipt your store never issued must return false (stale), but your "
                                + "store returned true")
                .isFalse();
        assertNothingClaimable(
                secondStore(), OWNER_A, OWNER_A + "'s lease on '" + m.id() + "' is still live");
        assertCompletes(store(), OWNER_A, d, "the foreign and unknown releases changed nothing");
    }
}
