package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static io.outbox4j.tck.Describe.idsOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Enqueue"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code Enqueue}.
 */
abstract class StoreEnqueueRules extends StoreRules {
    StoreEnqueueRules(OutboxStoreContract kit) {
        super(kit);
    }

    @Test
    @DisplayName(
            "a message enqueued in a committed transaction is claimable, on attempt 1, with a receipt of its own")
    void required_committedEnqueueIsClaimable() {
        List<Message> sent = messages(3);
        committed(sent);
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(ids(got))
                .as(
                        "after a committed enqueue of %s, a claim must lease exactly those messages, "
                                + "but your store returned %s%s",
                        idsOf(sent), deliveries(got), skewHint(got))
                .containsExactlyInAnyOrderElementsOf(idsOf(sent));
        for (Delivery d : got) {
            assertThat(d.attempt())
                    .as(
                            "the first claim of '%s' must report attempt 1, but your store "
                                    + "reported attempt %d",
                            d.message().id(), d.attempt())
                    .isEqualTo(1);
        }
        assertThat(got.stream().map(Delivery::receipt))
                .as(
                        "every delivery of a claim must carry a receipt "
                                + "of its own, but your store gave two deliveries the same receipt")
                .doesNotHaveDuplicates();
    }

    @Test
    @DisplayName("a message enqueued in a rolled-back transaction is never claimable")
    void optional_rolledBackEnqueueIsNeverClaimable() {
        assumeTransactions();
        List<Message> rolledBack = messages(2);
        Message kept = message().build();
        enqueueRolledBack(rolledBack);
        committed(kept);
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(ids(got))
                .as(
                        "messages enqueued in a transaction that rolled back (%s) must never be "
                                + "claimable; only '%s' was committed, but your store returned %s%s",
                        idsOf(rolledBack), kept.id(), deliveries(got), skewHint(got))
                .containsExactly(kept.id());
        advance(Duration.ofDays(1));
        List<Delivery> later = claimAll(secondStore(), OWNER_B);
        assertThat(ids(later))
                .as(
                        "one day later the rolled-back messages %s must still not be claimable, but "
                                + "your store returned %s",
                        idsOf(rolledBack), deliveries(later))
                .doesNotContainAnyElementsOf(idsOf(rolledBack));
    }

    @Test
    @DisplayName(
            "enqueueing an id that is already in the outbox is rejected with DuplicateMessageException and keeps the original")
    void required_duplicateIdIsRejected() {
        Message original = message().payload("the original").build();
        committed(original);
        Message impostor = original.toBuilder().payload("an impostor with the same id").build();
        Throwable thrown = catchThrowable(() -> enqueueCommitted(List.of(impostor)));
        DuplicateMessageException duplicate =
                assertDuplicate(
                        thrown,
                        "enqueueing a second message with id '%s' must be rejected with a"
                                + " DuplicateMessageException (message ids are unique per outbox)",
                        original);
        assertThat(duplicate.messageId())
                .as("the DuplicateMessageException must name the " + "duplicate id")
                .isEqualTo(original.id());
        syncWithWallClock();
        Delivery kept = claimOne(store(), OWNER_A, original);
        assertSameMessage(original, kept.message());
    }

    @Test
    @DisplayName("a batch that holds the same id twice is rejected with DuplicateMessageException")
    void required_duplicateIdWithinOneBatchIsRejected() {
        Message first = message().build();
        Message again = first.toBuilder().payload("same id, second in the batch").build();
        Throwable thrown =
                catchThrowable(() -> enqueueCommitted(List.of(first, message().build(), again)));
        assertDuplicate(
                thrown,
                "enqueueing a batch that holds id '%s' twice must be rejected with a"
                        + " DuplicateMessageException",
                first);
    }

    @Test
    @DisplayName("a batch rejected for a duplicate id leaves none of its messages behind")
    void optional_rejectedBatchLeavesNothingBehind() {
        assumeTransactions();
        Message existing = message().build();
        committed(existing);
        Message before = message().build();
        Message after = message().build();
        Message duplicate = existing.toBuilder().payload("duplicate").build();
        Throwable thrown =
                catchThrowable(() -> enqueueCommitted(List.of(before, duplicate, after)));
        assertDuplicate(thrown, BATCH_WITH_AN_EXISTING_ID, existing);
        assertOnlyClaimable(
                existing,
                List.of(before, duplicate, after),
                "enqueueAll is all or nothing: after the batch [%s, %s, %s] was rejected, "
                        + "only '%s' may be claimable, but your store returned %s%s");
    }

    @Test
    @DisplayName(
            "a message enqueued with the single-message enqueue is claimable, and a duplicate id is rejected there too")
    void required_singleEnqueueIsClaimableAndRejectsADuplicate() {
        Message one = message().key(nextKey()).header("h", "v").build();
        enqueueOneCommitted(one);
        syncWithWallClock();
        Message impostor = one.toBuilder().payload("an impostor with the same id").build();
        Throwable thrown = catchThrowable(() -> enqueueOneCommitted(impostor));
        assertDuplicate(
                thrown,
                "enqueue (the single form) of a second message with id '%s' must be rejected"
                        + " with a DuplicateMessageException",
                one);
        Delivery d = claimOne(store(), OWNER_A, one);
        assertSameMessage(one, d.message());
    }

    @Test
    @DisplayName(
            "a batch rejected for a duplicate id leaves nothing behind even when the caller commits its transaction")
    void optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind() {
        assumeTransactions();
        Message existing = message().build();
        committed(existing);
        Message before = message().build();
        Message duplicate = existing.toBuilder().payload("duplicate").build();
        Message after = message().build();
        @Nullable Throwable thrown;
        try {
            enqueueCommittingDespiteFailure(List.of(before, duplicate, after));
            thrown = null;
        } catch (OutboxStoreContract.NotSupplied e) {
            Assumptions.abort("skipped: " + e.getMessage());
            return;
        } catch (RuntimeException e) {
            thrown = e;
        }
        assertDuplicate(thrown, BATCH_WITH_AN_EXISTING_ID, existing);
        assertOnlyClaimable(
                existing,
                List.of(before, duplicate, after),
                "enqueueAll is all or nothing even for a caller who catches the"
                        + " DuplicateMessageException and commits: after the batch [%s, %s, %s]"
                        + " was rejected and the transaction committed, only '%s' may be"
                        + " claimable, but your store returned %s (it left part of the rejected"
                        + " batch in the caller's transaction)%s");
    }

    @Test
    @DisplayName(
            "a delivery carries when the store accepted the message, which stays the same on every claim")
    void required_deliveryCarriesTheEnqueueTime() {
        Instant before = Instant.now();
        Message m = message().build();
        Delivery first = leasedByOwnerA(m);
        Instant claimedAt = now();
        Instant at = first.enqueuedAt();
        Duration tolerance = clockSkewTolerance();
        assertThat(at)
                .as(
                        "Delivery.enqueuedAt of '%s' must not be after the claim at %s that leased"
                                + " it (a message claimable then was accepted before), but your store"
                                + " said %s: enqueuedAt must be when your store accepted the message,"
                                + " not a time of the claim or its lease",
                        m.id(), claimedAt, at)
                .isBeforeOrEqualTo(claimedAt);
        assertThat(at)
                .as(
                        "Delivery.enqueuedAt of '%s' must not be before the enqueue started at %s"
                                + " (minus clockSkewTolerance() = %s), but your store said %s",
                        m.id(), before, tolerance, at)
                .isAfterOrEqualTo(before.minus(tolerance));
        assertThat(at.truncatedTo(ChronoUnit.MICROS))
                .as(
                        "Delivery.enqueuedAt has microsecond precision at most, but your store said %s",
                        at)
                .isEqualTo(at);
        assertReleases(store(), OWNER_A, first, now(), "tck: retry");
        Delivery second = claimOne(secondStore(), OWNER_B, m);
        assertThat(second.enqueuedAt())
                .as(
                        "the enqueue time of '%s' never changes, but your store said %s on the first"
                                + " claim and %s after a release",
                        m.id(), at, second.enqueuedAt())
                .isEqualTo(at);
    }

    @Test
    @DisplayName(
            "enqueuedAt is when the store accepted the message, to a fraction of a second, even when the first claim comes a day later")
    void required_enqueueTimeIsTheAcceptanceTimeWhateverTheClaimTime() {
        Instant before = Instant.now();
        List<Message> sent = messages(3);
        for (Message m : sent) {
            committed(m); // three transactions, three enqueue times
        }
        Instant after = Instant.now();
        Instant claimedAt = advance(Duration.ofDays(1));
        List<Delivery> got = claimAll(store(), OWNER_A);
        Duration tolerance = clockSkewTolerance();
        List<Instant> times = new ArrayList<>();
        for (Message m : sent) {
            Instant at = of(got, m).enqueuedAt();
            times.add(at);
            assertThat(at)
                    .as(
                            "Delivery.enqueuedAt of '%s' must be when your store accepted it, between"
                                    + " %s and %s (the enqueue, give or take clockSkewTolerance() = %s),"
                                    + " also when it is first claimed a day later at %s, but your store"
                                    + " said %s (neither the claim's now nor the first claim's time is"
                                    + " the enqueue time)",
                            m.id(), before, after, tolerance, claimedAt, at)
                    .isBetween(before.minus(tolerance), after.plus(tolerance));
        }
        assertThat(times)
                .as(
                        "three messages enqueued in three transactions must keep their enqueue times"
                                + " to a fraction of a second (microseconds at most), but your store said"
                                + " %s: whole seconds lose the time a message waited",
                        times)
                .anyMatch(t -> !t.truncatedTo(ChronoUnit.SECONDS).equals(t));
    }

    @Test
    @DisplayName(
            "a delayed message is not claimed before its notBefore, and is claimed once it is due")
    void required_delayedMessageIsNotClaimedBeforeNotBefore() {
        Instant due = now().plus(Duration.ofMinutes(10));
        Message delayed = message().notBefore(due).build();
        committed(delayed);
        assertNothingClaimable(
                store(),
                OWNER_A,
                "'" + delayed.id() + "' has notBefore=" + due + ", 10 minutes later");
        advanceTo(due.minusMillis(1));
        assertNothingClaimable(
                store(), OWNER_A, "'" + delayed.id() + "' has notBefore=" + due + ", 1 ms later");
        advanceTo(due);
        claimOne(store(), OWNER_A, delayed);
    }

    private static final String BATCH_WITH_AN_EXISTING_ID =
            "a batch holding the existing id '%s' must be rejected with a DuplicateMessageException";

    /**
     * Checks that {@code thrown} is, or is caused by, a {@link DuplicateMessageException}.
     *
     * @param mustBeRejected what had to be rejected, with a {@code %s} for the id of {@code m}
     * @return the exception
     */
    private static DuplicateMessageException assertDuplicate(
            @Nullable Throwable thrown, String mustBeRejected, Message m) {
        Optional<DuplicateMessageException> duplicate = duplicateIn(thrown);
        assertThat(duplicate)
                .as(
                        "%s, but your store %s",
                        String.format(mustBeRejected, m.id()),
                        thrown == null ? "accepted it silently" : "threw " + thrown)
                .isPresent();
        return duplicate.orElseThrow();
    }

    /**
     * After the batch {@code rejected} (three messages) was rejected, checks that only {@code
     * existing} is claimable.
     *
     * @param format the failure message, taking the three ids of the batch, the id of {@code
     *     existing}, what the store returned and the clock-skew hint
     */
    private void assertOnlyClaimable(Message existing, List<Message> rejected, String format) {
        syncWithWallClock();
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(ids(got))
                .as(
                        format,
                        rejected.get(0).id(),
                        rejected.get(1).id(),
                        rejected.get(2).id(),
                        existing.id(),
                        deliveries(got),
                        skewHint(got.isEmpty()))
                .containsExactly(existing.id());
    }
}
