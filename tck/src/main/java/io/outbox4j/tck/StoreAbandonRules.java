package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Abandon and attempts"; {@link OutboxStoreContract} runs them
 * as its {@code @Nested} class {@code AbandonRules}.
 */
abstract class StoreAbandonRules extends StoreRules {
    StoreAbandonRules(OutboxStoreContract kit) {
        super(kit);
    }

    private void assertAbandons(OutboxStore on, String owner, Delivery d) {
        Set<String> stale = on.abandon(new Abandonment(owner, List.of(d.receipt())));
        assertThat(stale)
                .as(
                        "abandon by %s of '%s' with its live receipt must succeed, but your store"
                                + " reported it stale",
                        owner, d.message().id())
                .isEmpty();
    }

    @Test
    @DisplayName(
            "abandon takes the attempt back, while a release counts it: the next claim shows the same attempt")
    void required_abandonTakesTheAttemptBack() {
        Message m = message().build();
        Delivery first = leasedByOwnerA(m);
        assertAbandons(store(), OWNER_A, first);
        Delivery again = claimOne(secondStore(), OWNER_B, m);
        assertAttempt(
                again,
                1,
                "'%s' was claimed (attempt 1) and abandoned, never handed to a "
                        + "publisher: abandon takes the attempt back, so the next claim is "
                        + "attempt 1 again",
                m.id());
        assertReleases(secondStore(), OWNER_B, again, now(), "tck");
        Delivery afterRelease = claimOne(store(), OWNER_C, m);
        assertAttempt(
                afterRelease,
                2,
                "a release counts the attempt (a real try failed), so the claim after "
                        + "it is attempt 2");
        assertAbandons(store(), OWNER_C, afterRelease);
        Delivery last = claimOne(store(), OWNER_A, m);
        assertAttempt(
                last,
                2,
                "after one real try and an abandoned claim, the next claim is attempt "
                        + "2 again");
    }

    @Test
    @DisplayName(
            "an abandoned message is due again at once and keeps its place ahead of messages enqueued after it")
    void required_abandonedMessageKeepsItsPlace() {
        Message m1 = message().build();
        committed(m1);
        Delivery d = claimOne(store(), OWNER_A, m1);
        advance(Duration.ofSeconds(1));
        Message m2 = message().build();
        Message m3 = message().build();
        committed(m2);
        committed(m3);
        advance(Duration.ofMinutes(1));
        assertAbandons(store(), OWNER_A, d);
        String why =
                "'"
                        + m1.id()
                        + "' was enqueued before the others and abandoned (never tried): it is due"
                        + " at once, in its old place";
        claimExactly(secondStore(), OWNER_B, 1, List.of(m1), why);
        claimExactly(secondStore(), OWNER_B, 1, List.of(m2), why);
    }

    @Test
    @DisplayName(
            "a later message that was claimed with its key's head and abandoned waits while the head waits for its retry")
    void required_abandonedFollowerWaitsBehindItsReleasedHead() {
        SameKey k = committedHeadAndFollower();
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(ids(got))
                .as(
                        "a claim of everything must lease '%s' and then '%s' (both of one key, in"
                                + " enqueue order), but your store returned %s%s",
                        k.head().id(), k.follower().id(), deliveries(got), skewHint(got))
                .containsExactly(k.head().id(), k.follower().id());
        Instant retryAt = now().plus(Duration.ofMinutes(10));
        assertReleases(store(), OWNER_A, got.get(0), retryAt, "tck");
        assertAbandons(store(), OWNER_A, got.get(1));
        assertNothingClaimable(
                secondStore(),
                OWNER_B,
                "'"
                        + k.follower().id()
                        + "' was abandoned, but '"
                        + k.head().id()
                        + "' of its key waits for its retry at "
                        + retryAt
                        + ", so the abandoned follower must wait too");
        advanceTo(retryAt);
        List<Delivery> retry =
                claimHeadFirst(
                        secondStore(),
                        OWNER_B,
                        k.head(),
                        List.of(k.follower()),
                        "its retry is due and it is the first of its key");
        assertAttempt(
                retry.get(0),
                2,
                "the retry of '%s' (one real try failed) must be attempt 2",
                k.head().id());
        Delivery f;
        if (retry.size() > 1) {
            f = retry.get(1);
        } else {
            assertCompletes(secondStore(), OWNER_B, retry.get(0), "the lease is live");
            f = claimOne(store(), OWNER_C, k.follower());
        }
        assertAttempt(
                f,
                1,
                "'%s' was claimed once and abandoned, so its next claim is attempt 1",
                k.follower().id());
    }

    @Test
    @DisplayName(
            "abandon by a foreign owner, with an unknown receipt, or with a receipt whose lease was claimed again, changes nothing")
    void required_abandonWithAStaleOrForeignReceiptChangesNothing() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        Instant claimedAt = now();
        Set<String> foreign = store().abandon(new Abandonment(OWNER_B, List.of(d.receipt())));
        assertThat(foreign)
                .as(
                        "abandon by %s of a receipt that %s holds must report it stale (a"
                                + " compare-and-set on owner and receipt), but your store reported %s",
                        OWNER_B, OWNER_A, foreign)
                .containsExactly(d.receipt());
        Set<String> unknown = store().abandon(new Abandonment(OWNER_A, List.of(UNKNOWN_RECEIPT)));
        assertThat(unknown)
                .as(
                        "abandon with a receipt your store never issued must report it stale, but"
                                + " your store reported %s",
                        unknown)
                .containsExactly(UNKNOWN_RECEIPT);
        assertNothingClaimable(
                secondStore(),
                OWNER_C,
                OWNER_A + "'s lease on '" + m.id() + "' is still live after stale abandons");
        advanceTo(claimedAt.plus(LEASE));
        Delivery b = claimOne(secondStore(), OWNER_B, m);
        Set<String> old = store().abandon(new Abandonment(OWNER_A, List.of(d.receipt())));
        assertThat(old)
                .as(
                        "abandon by %s with its expired receipt, after %s claimed '%s' again, must"
                                + " report it stale, but your store reported %s",
                        OWNER_A, OWNER_B, m.id(), old)
                .containsExactly(d.receipt());
        assertNothingClaimable(
                store(),
                OWNER_C,
                "the stale abandon must not have given back " + OWNER_B + "'s live lease");
        assertCompletes(secondStore(), OWNER_B, b, "the stale abandons changed nothing");
    }

    @Test
    @DisplayName(
            "the receipt of an abandoned lease is stale: it can neither complete, extend nor abandon again")
    void required_abandonedReceiptIsStale() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertAbandons(store(), OWNER_A, d);
        assertThat(store().complete(new Completion(OWNER_A, List.of(d.receipt()))))
                .as("complete with the receipt of an abandoned lease must report it stale")
                .containsExactly(d.receipt());
        assertThat(
                        store().extend(
                                        new Extension(
                                                OWNER_A,
                                                List.of(d.receipt()),
                                                now().plus(Duration.ofDays(1)))))
                .as("extend with the receipt of an abandoned lease must report it stale")
                .containsExactly(d.receipt());
        assertThat(store().abandon(new Abandonment(OWNER_A, List.of(d.receipt()))))
                .as("a second abandon with the same receipt must report it stale")
                .containsExactly(d.receipt());
        Delivery again = claimOne(secondStore(), OWNER_B, m);
        assertAttempt(
                again,
                1,
                "'%s' was claimed once and abandoned (the stale writes after that "
                        + "changed nothing), so its next claim is attempt 1",
                m.id());
    }
}
