package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

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
 * The store kit's rules of the group "Extend"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code ExtendRules}.
 */
abstract class StoreExtendRules extends StoreRules {
    StoreExtendRules(OutboxStoreContract kit) {
        super(kit);
    }

    @Test
    @DisplayName(
            "an extended lease hides its message until the new end, and only the leases named are extended")
    void required_extendedLeaseHidesTheMessageUntilTheNewEnd() {
        Message extended = message().build();
        Message notExtended = message().build();
        List<Delivery> got = leasedByOwnerA(extended, notExtended);
        Instant claimedAt = now();
        Delivery d = of(got, extended);
        Instant until = claimedAt.plus(Duration.ofMinutes(15));
        Set<String> stale = store().extend(new Extension(OWNER_A, List.of(d.receipt()), until));
        assertThat(stale)
                .as(
                        "extend by %s of its live lease on '%s' must succeed, but your store reported"
                                + " it stale",
                        OWNER_A, extended.id())
                .isEmpty();
        advanceTo(claimedAt.plus(LEASE));
        List<Delivery> atOldEnd = claimAll(secondStore(), OWNER_B);
        assertThat(ids(atOldEnd))
                .as(
                        "at the end of the original lease (%s), '%s' (lease extended to %s) must"
                                + " stay hidden and '%s' (not extended) must be claimable, but your"
                                + " store returned %s",
                        claimedAt.plus(LEASE),
                        extended.id(),
                        until,
                        notExtended.id(),
                        deliveries(atOldEnd))
                .containsExactly(notExtended.id());
        assertCompletes(secondStore(), OWNER_B, atOldEnd.get(0), "the lease is live");
        advanceTo(until.minusMillis(1));
        assertNothingClaimable(
                store(),
                OWNER_C,
                "'" + extended.id() + "' is leased until " + until + ", 1 ms later");
        advanceTo(until);
        Delivery after = claimOne(secondStore(), OWNER_C, extended);
        assertAttempt(after, 2, "after the extended lease ended, the next claim must be attempt 2");
    }

    @Test
    @DisplayName("an extended lease keeps its receipt: the owner can still complete it")
    void required_extendKeepsTheReceiptLive() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        Instant claimedAt = now();
        Instant until = claimedAt.plus(Duration.ofMinutes(15));
        assertThat(store().extend(new Extension(OWNER_A, List.of(d.receipt()), until)))
                .as("extend by %s of its live lease must succeed", OWNER_A)
                .isEmpty();
        advanceTo(claimedAt.plus(Duration.ofMinutes(10)));
        assertCompletes(
                secondStore(),
                OWNER_A,
                d,
                "the lease was extended to " + until + ", after the original end");
        advanceTo(until);
        assertNothingClaimable(store(), OWNER_B, "'" + m.id() + "' was completed");
    }

    @Test
    @DisplayName(
            "extend by a foreign owner, with an unknown receipt, or with a receipt whose lease was claimed again, extends nothing")
    void required_extendWithAStaleOrForeignReceiptExtendsNothing() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        Instant claimedAt = now();
        Instant tomorrow = claimedAt.plus(Duration.ofDays(1));
        Set<String> foreign =
                store().extend(
                                new Extension(
                                        OWNER_B, List.of(d.receipt(), UNKNOWN_RECEIPT), tomorrow));
        assertThat(foreign)
                .as(
                        "extend by %s of a receipt that %s holds, and of a receipt your store never"
                                + " issued, must report both stale, but your store reported %s",
                        OWNER_B, OWNER_A, foreign)
                .containsExactlyInAnyOrder(d.receipt(), UNKNOWN_RECEIPT);
        advanceTo(claimedAt.plus(LEASE));
        Delivery b = claimOne(secondStore(), OWNER_B, m);
        Instant reclaimedAt = now();
        Set<String> old = store().extend(new Extension(OWNER_A, List.of(d.receipt()), tomorrow));
        assertThat(old)
                .as(
                        "extend by %s with its expired receipt, after %s claimed '%s' again, must"
                                + " report it stale, but your store reported %s",
                        OWNER_A, OWNER_B, m.id(), old)
                .containsExactly(d.receipt());
        advanceTo(reclaimedAt.plus(LEASE));
        List<Delivery> got = claimAll(store(), OWNER_C);
        assertThat(ids(got))
                .as(
                        "%s's lease on '%s' ends at %s: the stale extends to %s must not have moved"
                                + " it, so it must be claimable then, but your store returned %s",
                        OWNER_B, m.id(), reclaimedAt.plus(LEASE), tomorrow, deliveries(got))
                .containsExactly(m.id());
        Set<String> bStale = secondStore().complete(new Completion(OWNER_B, List.of(b.receipt())));
        assertThat(bStale)
                .as(
                        "%s's receipt is stale once %s claimed the message again, but your store"
                                + " reported %s",
                        OWNER_B, OWNER_C, bStale)
                .containsExactly(b.receipt());
    }

    @Test
    @DisplayName("the receipt of a released or dead-lettered message extends nothing")
    void required_extendOfAFinishedLeaseExtendsNothing() {
        Message released = message().build();
        Message dead = message().build();
        List<Delivery> got = leasedByOwnerA(released, dead);
        Delivery r = of(got, released);
        Delivery x = of(got, dead);
        assertThat(store().release(new Release(OWNER_A, r.receipt(), now(), "tck")))
                .as(
                        "release by %s of its live lease on '%s' must return true (the rule"
                                + " then extends the finished lease), but your store returned false",
                        OWNER_A, r.message().id())
                .isTrue();
        assertThat(store().deadLetter(new DeadLetter(OWNER_A, x.receipt(), "tck", now())))
                .as(
                        "deadLetter by %s of its live lease on '%s' must return true (the rule"
                                + " then extends the finished lease), but your store returned false",
                        OWNER_A, x.message().id())
                .isTrue();
        Instant tomorrow = now().plus(Duration.ofDays(1));
        Set<String> stale =
                store().extend(new Extension(OWNER_A, List.of(r.receipt(), x.receipt()), tomorrow));
        assertThat(stale)
                .as(
                        "extend with the receipts of a released and of a dead-lettered message must"
                                + " report both stale, but your store reported %s",
                        stale)
                .containsExactlyInAnyOrder(r.receipt(), x.receipt());
        List<Delivery> after = claimAll(secondStore(), OWNER_B);
        assertThat(ids(after))
                .as(
                        "'%s' was released with availableAt=now and '%s' dead-lettered; the stale"
                                + " extend must have changed neither, so only '%s' is claimable, but"
                                + " your store returned %s",
                        released.id(), dead.id(), released.id(), deliveries(after))
                .containsExactly(released.id());
    }
}
