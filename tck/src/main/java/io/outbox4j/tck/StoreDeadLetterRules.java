package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Dead letter"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code DeadLetterRules}.
 */
abstract class StoreDeadLetterRules extends StoreRules {
    StoreDeadLetterRules(OutboxStoreContract kit) {
        super(kit);
    }

    @Test
    @DisplayName("a dead-lettered message is never claimed again")
    void required_deadLetteredMessageIsNeverClaimedAgain() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertDeadLetters(store(), OWNER_A, d, "tck: poison message");
        assertNothingClaimable(store(), OWNER_B, "'" + m.id() + "' was dead-lettered");
        advance(Duration.ofDays(1));
        assertNothingClaimable(
                secondStore(), OWNER_B, "'" + m.id() + "' was dead-lettered a day ago");
    }

    @Test
    @DisplayName("a dead-lettered message keeps its reason")
    void required_deadLetterKeepsTheReason() {
        Message parked = message().build();
        Message other = message().build();
        committed(parked, other);
        List<Delivery> got = claimAll(store(), OWNER_A);
        Delivery d = of(got, parked);
        String reason =
                "tck: permanent failure — «payload rejected» by the broker (code 42) "
                        + "x".repeat(Release.MAX_ERROR_LENGTH - 80);
        DeadLetter letter = new DeadLetter(OWNER_A, d.receipt(), reason, now());
        assertThat(store().deadLetter(letter))
                .as("deadLetter with a live receipt must return true")
                .isTrue();
        assertThat(deadLetterReason(parked.id()))
                .as(
                        "the store must keep the dead-letter reason of '%s' "
                                + "exactly (%d characters)",
                        parked.id(), letter.reason().length())
                .contains(letter.reason());
        assertThat(deadLetterReason(other.id()))
                .as("'%s' was not dead-lettered, so it has no reason", other.id())
                .isEmpty();
    }

    @Test
    @DisplayName(
            "the receipt of a dead-lettered message is stale: it can neither complete nor release it")
    void required_deadLetteredReceiptIsStale() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertDeadLetters(store(), OWNER_A, d, "tck: poison");
        Set<String> stale = store().complete(new Completion(OWNER_A, List.of(d.receipt())));
        assertThat(stale)
                .as(
                        "complete with the receipt of a dead-lettered message must report it stale, but "
                                + "your store reported %s",
                        stale)
                .containsExactly(d.receipt());
        assertThat(store().release(new Release(OWNER_A, d.receipt(), now(), "tck: revive")))
                .as(
                        "release with the receipt of a dead-lettered message must return false, but your store "
                                + "returned true")
                .isFalse();
        assertNothingClaimable(
                store(),
                OWNER_B,
                "'"
                        + m.id()
                        + "' is dead-lettered; the stale release "
                        + "(availableAt=now) must not have revived it");
        assertThat(deadLetterReason(m.id()))
                .as("the reason of '%s' must still be kept", m.id())
                .contains("tck: poison");
    }

    @Test
    @DisplayName("deadLetter by a foreign owner, or with an unknown receipt, changes nothing")
    void required_deadLetterWithAForeignOwnerOrUnknownReceiptChangesNothing() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertThat(store().deadLetter(new DeadLetter(OWNER_B, d.receipt(), "tck: foreign", now())))
                .as(
                        "deadLetter by %s of a receipt that %s holds must return false (stale), but your store "
                                + "returned true",
                        OWNER_B, OWNER_A)
                .isFalse();
        assertThat(
                        store().deadLetter(
                                        new DeadLetter(
                                                OWNER_A, UNKNOWN_RECEIPT, "tck: unknown", now())))
                .as(
                        "deadLetter with a receipt your store never issued must return false (stale), but your "
                                + "store returned true")
                .isFalse();
        assertThat(deadLetterReason(m.id()))
                .as("no reason may be recorded for '%s' by a stale deadLetter", m.id())
                .isEmpty();
        assertCompletes(store(), OWNER_A, d, "the foreign and unknown deadLetters changed nothing");
    }
}
