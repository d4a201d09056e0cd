package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Complete"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code Complete}.
 */
abstract class StoreCompleteRules extends StoreRules {
    StoreCompleteRules(OutboxStoreContract kit) {
        super(kit);
    }

    @Test
    @DisplayName("a completed message is gone for good")
    void required_completeRemovesTheMessageForGood() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertCompletes(store(), OWNER_A, d, "the lease is live");
        assertNothingClaimable(store(), OWNER_B, "'" + m.id() + "' was completed");
        advance(Duration.ofDays(1));
        assertNothingClaimable(
                secondStore(),
                OWNER_B,
                "'"
                        + m.id()
                        + "' was completed a day ago (long after "
                        + "its lease would have ended)");
        assertThat(deadLetterReason(m.id()))
                .as("a completed message is not dead-lettered")
                .isEmpty();
    }

    @Test
    @DisplayName("completing the same receipt twice reports the second one stale")
    void required_completingTwiceReportsTheSecondStale() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        assertCompletes(store(), OWNER_A, d, "the lease is live");
        Set<String> again = store().complete(new Completion(OWNER_A, List.of(d.receipt())));
        assertThat(again)
                .as(
                        "a second complete of '%s' with the same receipt must report it stale (the "
                                + "message is already finished), but your store reported %s",
                        m.id(), again)
                .containsExactly(d.receipt());
    }

    @Test
    @DisplayName("one complete call finishes a whole batch of receipts")
    void required_completeTakesABatchOfReceipts() {
        List<Message> sent = messages(5);
        committed(sent);
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(got).as("claim must lease all 5 available messages%s", skewHint(got)).hasSize(5);
        List<String> receipts = got.subList(0, 3).stream().map(Delivery::receipt).toList();
        Set<String> stale = store().complete(new Completion(OWNER_A, receipts));
        assertThat(stale)
                .as(
                        "complete of 3 live receipts in one call must succeed for all, but your store "
                                + "reported %d stale",
                        stale.size())
                .isEmpty();
        Set<String> again = store().complete(new Completion(OWNER_A, receipts));
        assertThat(again)
                .as(
                        "completing the same 3 receipts again must report all of them stale (they were "
                                + "finished by the batch), but your store reported %s",
                        again)
                .containsExactlyInAnyOrderElementsOf(receipts);
        for (Delivery d : got.subList(3, 5)) {
            assertCompletes(store(), OWNER_A, d, "the batch did not touch it");
        }
    }

    @Test
    @DisplayName("a batch complete reports exactly its stale receipts and finishes the others")
    void required_completeReportsOnlyTheStaleReceiptsOfABatch() {
        List<Message> sent = messages(3);
        committed(sent);
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(got).as("claim must lease all 3 available messages%s", skewHint(got)).hasSize(3);
        List<String> live = List.of(got.get(0).receipt(), got.get(1).receipt());
        List<String> receipts = List.of(live.get(0), UNKNOWN_RECEIPT, live.get(1));
        Set<String> stale = store().complete(new Completion(OWNER_A, receipts));
        assertThat(stale)
                .as(
                        "complete of [live, unknown, live] receipts must report exactly the unknown "
                                + "receipt '%s' stale, but your store reported %s",
                        UNKNOWN_RECEIPT, stale)
                .containsExactly(UNKNOWN_RECEIPT);
        Set<String> again = store().complete(new Completion(OWNER_A, live));
        assertThat(again)
                .as(
                        "the two live receipts of that batch must have been completed despite the "
                                + "unknown one (completing them again reports them stale), but your store reported %s",
                        again)
                .containsExactlyInAnyOrderElementsOf(live);
        assertCompletes(store(), OWNER_A, got.get(2), "it was not part of the batch");
    }

    @Test
    @DisplayName("complete by a foreign owner, or with an unknown receipt, changes nothing")
    void required_completeWithAForeignOwnerOrUnknownReceiptChangesNothing() {
        Message m = message().build();
        Delivery d = leasedByOwnerA(m);
        Set<String> foreign = store().complete(new Completion(OWNER_B, List.of(d.receipt())));
        assertThat(foreign)
                .as(
                        "complete by %s of a receipt that %s holds must report it stale (every write "
                                + "is a compare-and-set on owner and receipt), but your store reported %s",
                        OWNER_B, OWNER_A, foreign)
                .containsExactly(d.receipt());
        Set<String> unknown = store().complete(new Completion(OWNER_A, List.of(UNKNOWN_RECEIPT)));
        assertThat(unknown)
                .as(
                        "complete with a receipt your store never issued must report it stale, but "
                                + "your store reported %s",
                        unknown)
                .containsExactly(UNKNOWN_RECEIPT);
        assertNothingClaimable(
                secondStore(), OWNER_A, OWNER_A + "'s lease on '" + m.id() + "' is still live");
        assertCompletes(store(), OWNER_A, d, "the foreign and unknown completes changed nothing");
    }
}
