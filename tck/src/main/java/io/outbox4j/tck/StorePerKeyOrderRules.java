package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static io.outbox4j.tck.Describe.idsOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Per-key order"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code PerKeyOrder}.
 */
abstract class StorePerKeyOrderRules extends StoreRules {
    StorePerKeyOrderRules(OutboxStoreContract kit) {
        super(kit);
    }

    /** Claims with limit 1 and checks it took the first message of a key. */
    private Delivery claimTheFirst(OutboxStore on, String owner, Message first) {
        return claimExactly(
                        on,
                        owner,
                        1,
                        List.of(first),
                        "it is the oldest available message, the first of its key")
                .get(0);
    }

    private String heldBack(Message later, Message earlier, String state) {
        return "'"
                + later.id()
                + "' comes after '"
                + earlier.id()
                + "' in key '"
                + earlier.key().orElse("")
                + "', which "
                + state
                + " (a keyed message is claimable only when every earlier message of its key is"
                + " claimed in the same claim, before it)";
    }

    @Test
    @DisplayName(
            "a later message of a key is not claimable while an earlier one is leased, by another owner or by the same one")
    void required_laterMessageWaitsWhileAnEarlierOneIsLeased() {
        SameKey k = committedHeadAndFollower();
        Instant claimedAt = now();
        claimTheFirst(store(), OWNER_A, k.head());
        String why = heldBack(k.follower(), k.head(), "is leased by " + OWNER_A);
        assertNothingClaimable(store(), OWNER_B, why);
        assertNothingClaimable(secondStore(), OWNER_B, why + " (asked through secondStore())");
        assertNothingClaimable(
                store(),
                OWNER_A,
                why + " (the owner of the earlier lease must not get the later one either)");
        advanceTo(claimedAt.plus(LEASE).minusMillis(1));
        assertNothingClaimable(secondStore(), OWNER_C, why + " until 1 ms before it ends");
        advanceTo(claimedAt.plus(LEASE));
        claimHeadFirst(
                secondStore(),
                OWNER_B,
                k.head(),
                List.of(k.follower()),
                "its lease ended, so it is handed out again before the later message of its key");
    }

    @Test
    @DisplayName(
            "keys are compared exactly: keys that differ only by case, or share a 32-bit hash,"
                    + " are different keys")
    void required_keysDifferingOnlyByCaseOrSharingAHashAreDifferentKeys() {
        String base = nextKey();
        // "Aa" and "BB" have the same String.hashCode(), so do "AaAa" and "BBBB"
        List<String> keys = List.of(base + "-Aa", base + "-BB", base + "-X", base + "-x");
        List<Message> heads = new ArrayList<>();
        for (String key : keys) {
            heads.add(keyed(key));
        }
        committed(heads.get(0), heads.get(2));
        committed(heads.get(1), heads.get(3));
        claimExactly(
                store(),
                OWNER_A,
                2,
                List.of(heads.get(0), heads.get(2)),
                "the oldest two, of keys '" + keys.get(0) + "' and '" + keys.get(2) + "'");
        claimExactly(
                store(),
                OWNER_B,
                10,
                List.of(heads.get(1), heads.get(3)),
                "'"
                        + heads.get(1).id()
                        + "' (key '"
                        + keys.get(1)
                        + "', same String.hashCode() as '"
                        + keys.get(0)
                        + "') and '"
                        + heads.get(3).id()
                        + "' (key '"
                        + keys.get(3)
                        + "', '"
                        + keys.get(2)
                        + "' in another case) are the first of their own keys: a store that"
                        + " compares keys by hash or ignoring case holds them back behind the"
                        + " leased messages of other keys");
    }

    @Test
    @DisplayName(
            "a later message of a key is not claimable while an earlier one waits for its retry")
    void required_laterMessageWaitsWhileAnEarlierOneWaitsForItsRetry() {
        SameKey k = committedHeadAndFollower();
        List<Delivery> got =
                claimHeadFirst(
                        store(),
                        OWNER_A,
                        k.head(),
                        List.of(k.follower()),
                        "it is the first of its key");
        Instant retryAt = now().plus(Duration.ofMinutes(10));
        assertReleases(store(), OWNER_A, got.get(0), retryAt, "tck");
        if (got.size() > 1) {
            // the relay held the later message back and hands it back "not started"
            assertReleases(store(), OWNER_A, got.get(1), now(), "tck: not started");
        }
        String why = heldBack(k.follower(), k.head(), "waits for its retry at " + retryAt);
        assertNothingClaimable(secondStore(), OWNER_B, why);
        advanceTo(retryAt.minusMillis(1));
        assertNothingClaimable(store(), OWNER_B, why + ", 1 ms later");
        advanceTo(retryAt);
        claimHeadFirst(
                secondStore(),
                OWNER_B,
                k.head(),
                List.of(k.follower()),
                "its retry is due, and it comes before the later message of its key");
    }

    @Test
    @DisplayName(
            "a later message of a key is not claimable while an earlier one is delayed by its notBefore")
    void required_laterMessageWaitsWhileAnEarlierOneIsDelayed() {
        String key = nextKey();
        Instant due = now().plus(Duration.ofMinutes(10));
        Message first = message().key(key).notBefore(due).build();
        Message second = keyed(key);
        Message unkeyed = message().build();
        committed(first, second, unkeyed);
        List<Delivery> u =
                claimExactly(
                        store(),
                        OWNER_A,
                        10,
                        List.of(unkeyed),
                        heldBack(second, first, "has notBefore=" + due + ", 10 minutes later"));
        assertCompletes(store(), OWNER_A, u.get(0), "the lease is live");
        advanceTo(due);
        claimHeadFirst(
                secondStore(),
                OWNER_B,
                first,
                List.of(second),
                "its notBefore has come, and it comes before the later message of its key");
    }

    @Test
    @DisplayName("a later message of a key is not claimable while an earlier one is dead-lettered")
    void required_deadLetterBlocksLaterMessagesOfItsKey() {
        SameKey k = committedHeadAndFollower();
        Delivery d = claimTheFirst(store(), OWNER_A, k.head());
        assertDeadLetters(store(), OWNER_A, d, "tck: poison");
        String why =
                heldBack(k.follower(), k.head(), "is dead-lettered")
                        + "; by default a dead letter blocks its key until it is replayed or"
                        + " discarded (store() must be built with the defaults)";
        assertNothingClaimable(store(), OWNER_B, why);
        advance(Duration.ofDays(1));
        assertNothingClaimable(secondStore(), OWNER_B, why + ", even a day later");
    }

    /** Enqueues two messages of a key and dead-letters the first; returns them. */
    private SameKey deadHeadAndFollower() {
        SameKey k = committedHeadAndFollower();
        Delivery d = claimTheFirst(store(), OWNER_A, k.head());
        assertDeadLetters(store(), OWNER_A, d, "tck: poison");
        assertNothingClaimable(
                store(), OWNER_B, heldBack(k.follower(), k.head(), "is dead-lettered"));
        return k;
    }

    @Test
    @DisplayName(
            "a dead letter blocks its key until it is replayed; then it is claimed first, on attempt 1")
    void optional_deadLetterBlocksItsKeyUntilReplayed() {
        OutboxAdmin admin = requireAdmin("replay a dead letter");
        SameKey m = deadHeadAndFollower();
        int replayed = admin.replay(List.of(m.head().id()), now());
        assertThat(replayed)
                .as(
                        "admin().replay of the dead letter '%s' must replay 1, but your store"
                                + " replayed %d",
                        m.head().id(), replayed)
                .isEqualTo(1);
        List<Delivery> got =
                claimHeadFirst(
                        secondStore(),
                        OWNER_B,
                        m.head(),
                        List.of(m.follower()),
                        "it was replayed, and it is still the first of its key");
        assertAttempt(got.get(0), 1, "a replayed message starts again at attempt 1");
        if (got.size() == 1) {
            assertCompletes(secondStore(), OWNER_B, got.get(0), "the lease is live");
            claimOne(store(), OWNER_C, m.follower());
        }
    }

    @Test
    @DisplayName("a dead letter blocks its key until it is discarded")
    void optional_deadLetterBlocksItsKeyUntilDiscarded() {
        OutboxAdmin admin = requireAdmin("discard a dead letter");
        SameKey m = deadHeadAndFollower();
        int discarded = admin.discard(List.of(m.head().id()));
        assertThat(discarded)
                .as(
                        "admin().discard of the dead letter '%s' must discard 1, but your store"
                                + " discarded %d",
                        m.head().id(), discarded)
                .isEqualTo(1);
        claimOne(secondStore(), OWNER_B, m.follower());
    }

    @Test
    @DisplayName(
            "a store built so that dead letters do not block lets the later messages of their key through")
    void optional_deadLettersDoNotBlockWhenTheStoreIsBuiltSo() {
        Optional<OutboxStore> option = storeWhereDeadLettersDoNotBlock();
        Assumptions.assumeTrue(
                option.isPresent(),
                "skipped: storeWhereDeadLettersDoNotBlock() returned empty (the store has no"
                        + " option under which dead letters do not block their key)");
        OutboxStore lenient = option.orElseThrow();
        SameKey k = committedHeadAndFollower();
        Delivery d = claimTheFirst(lenient, OWNER_A, k.head());
        assertNothingClaimable(
                lenient,
                OWNER_B,
                heldBack(k.follower(), k.head(), "is leased (whatever the option)"));
        assertDeadLetters(lenient, OWNER_A, d, "tck: poison");
        List<Delivery> got = claimAll(lenient, OWNER_B);
        assertThat(ids(got))
                .as(
                        "storeWhereDeadLettersDoNotBlock() is built so that a dead letter no longer"
                                + " counts as an earlier message of its key: after '%s' was"
                                + " dead-lettered, '%s' must be claimable, but your store returned %s",
                        k.head().id(), k.follower().id(), deliveries(got))
                .containsExactly(k.follower().id());
    }

    @Test
    @DisplayName("a later message of a key becomes claimable once the earlier one completes")
    void required_laterMessageBecomesClaimableWhenTheEarlierOneCompletes() {
        SameKey k = committedHeadAndFollower();
        Delivery d = claimTheFirst(store(), OWNER_A, k.head());
        assertCompletes(store(), OWNER_A, d, "the lease is live");
        Delivery next = claimOne(secondStore(), OWNER_B, k.follower());
        assertAttempt(
                next,
                1,
                "'%s' was held back, never claimed: its first claim is attempt 1",
                k.follower().id());
    }

    @Test
    @DisplayName("a claim that takes several messages of one key lists them in enqueue order")
    void required_aClaimListsTheMessagesOfAKeyInEnqueueOrder() {
        String key = nextKey();
        String other = nextKey();
        Message k1 = keyed(key);
        Message u1 = message().build();
        Message k2 = keyed(key);
        Message o1 = keyed(other);
        Message k3 = keyed(key);
        committed(k1, u1, k2);
        committed(o1, k3);
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(ids(got))
                .as(
                        "a claim of everything must lease all of %s%s",
                        idsOf(List.of(k1, u1, k2, o1, k3)), skewHint(got))
                .containsExactlyInAnyOrder(k1.id(), u1.id(), k2.id(), o1.id(), k3.id());
        List<String> ofKey =
                got.stream()
                        .filter(x -> x.message().key().equals(Optional.of(key)))
                        .map(x -> x.message().id())
                        .toList();
        assertThat(ofKey)
                .as(
                        "the messages of key '%s' must be listed in enqueue order %s (the relay"
                                + " publishes in claim order), but your store listed %s",
                        key, idsOf(List.of(k1, k2, k3)), ids(got))
                .containsExactly(k1.id(), k2.id(), k3.id());
    }

    @Test
    @DisplayName(
            "the messages of a key are handed out in enqueue order, not in id or occurredAt order")
    void required_keyOrderIsEnqueueOrderNotIdOrOccurredAtOrder() {
        List<Message> zam = disagreeing(nextKey());
        committed(zam);
        String why =
                "enqueued in the order z, a, m with one key: key order is enqueue order, not id"
                        + " order (a, m, z) nor occurredAt order (a, z, m)";
        Delivery z = claimExactly(store(), OWNER_A, 1, zam.subList(0, 1), why).get(0);
        assertNothingClaimable(
                secondStore(), OWNER_B, heldBack(zam.get(1), zam.get(0), "is leased"));
        assertCompletes(store(), OWNER_A, z, "the lease is live");
        claimExactly(secondStore(), OWNER_B, 10, zam.subList(1, 3), why);
    }

    @Test
    @DisplayName("per-key order holds across owners and across two store instances")
    void required_keyOrderHoldsAcrossOwnersAndStoreInstances() {
        String key = nextKey();
        Message k1 = keyed(key);
        Message k2 = keyed(key);
        Message k3 = keyed(key);
        committed(k1, k2, k3);
        Delivery d1 = claimTheFirst(store(), OWNER_A, k1);
        assertNothingClaimable(
                secondStore(),
                OWNER_B,
                heldBack(k2, k1, "is leased by " + OWNER_A + " through store()"));
        assertCompletes(store(), OWNER_A, d1, "the lease is live");
        Delivery d2 =
                claimExactly(
                                secondStore(),
                                OWNER_B,
                                1,
                                List.of(k2),
                                "'" + k1.id() + "' was completed")
                        .get(0);
        assertNothingClaimable(
                store(),
                OWNER_A,
                heldBack(k3, k2, "is leased by " + OWNER_B + " through secondStore()"));
        assertCompletes(secondStore(), OWNER_B, d2, "the lease is live");
        claimOne(store(), OWNER_A, k3);
    }

    @Test
    @DisplayName(
            "messages without a key, and messages of other keys, are not held back by a blocked key")
    void required_unkeyedAndOtherKeysAreNotHeldBack() {
        SameKey k = committedHeadAndFollower();
        claimTheFirst(store(), OWNER_A, k.head());
        Message unkeyed = message().build();
        Message otherKey = keyed(nextKey());
        committed(unkeyed, otherKey);
        List<Delivery> got = claimAll(secondStore(), OWNER_B);
        assertThat(ids(got))
                .as(
                        "while '%s' is leased, only its own key is blocked: '%s' (no key) and '%s'"
                                + " (another key) must be claimable and '%s' not, but your store"
                                + " returned %s%s",
                        k.head().id(),
                        unkeyed.id(),
                        otherKey.id(),
                        k.follower().id(),
                        deliveries(got),
                        skewHint(got))
                .containsExactlyInAnyOrder(unkeyed.id(), otherKey.id());
    }
}
