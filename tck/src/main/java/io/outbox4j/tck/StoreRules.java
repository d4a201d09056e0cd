package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static io.outbox4j.tck.Describe.idsOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * Base of the store kit's rule groups: the helpers every group uses (test data, claims checked
 * against what must come back, failure hints) over the kit's shared {@link KitClock}, and the kit's
 * factories, which it calls on the {@link OutboxStoreContract} instance that runs the rule. The
 * helpers are not the kit's API: a subclass of the kit cannot change what a rule means.
 */
abstract class StoreRules extends KitRules {
    static final String OWNER_A = "tck-owner-a";
    static final String OWNER_B = "tck-owner-b";
    static final String OWNER_C = "tck-owner-c";
    static final String UNKNOWN_RECEIPT = "tck-receipt-that-no-store-issued";

    /** How much later than a failed claim the clock probe of {@link #skewHint} claims. */
    private static final Duration SKEW_PROBE = Duration.ofSeconds(59);

    /** The kit instance that runs the rule, for its factories. */
    final OutboxStoreContract kit;

    StoreRules(OutboxStoreContract kit) {
        super(kit.clock);
        this.kit = kit;
    }

    @Override
    OutboxStore store() {
        return kit.store();
    }

    OutboxStore secondStore() {
        return kit.secondStore();
    }

    @Override
    void resetStore() {
        kit.resetStore();
    }

    @Override
    void enqueueCommitted(List<Message> messages) {
        kit.enqueueCommitted(messages);
    }

    void enqueueOneCommitted(Message message) {
        kit.enqueueOneCommitted(message);
    }

    void enqueueRolledBack(List<Message> messages) {
        kit.enqueueRolledBack(messages);
    }

    void enqueueCommittingDespiteFailure(List<Message> messages) {
        kit.enqueueCommittingDespiteFailure(messages);
    }

    Optional<OutboxAdmin> admin() {
        return kit.admin();
    }

    Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
        return kit.storeWhereDeadLettersDoNotBlock();
    }

    Optional<String> deadLetterReason(String messageId) {
        return kit.deadLetterReason(messageId);
    }

    Optional<String> transactionsUnsupported() {
        return kit.transactionsUnsupported();
    }

    Optional<String> largePayloadUnsupported() {
        return kit.largePayloadUnsupported();
    }

    @Override
    Duration clockSkewTolerance() {
        return kit.clockSkewTolerance();
    }

    int concurrencyMessageCount() {
        return kit.concurrencyMessageCount();
    }

    /**
     * A message with a fresh id and an {@code occurredAt} that zigzags (+1 s, −2 s, +3 s, …), so
     * that occurrence order is neither enqueue order nor its reverse.
     */
    Message.Builder message() {
        return clock.message("tck.orders")
                .contentType("text/plain; charset=utf-8")
                .payload("payload of " + clock.lastId());
    }

    @Override
    Message keyed(String key) {
        return message().key(key).build();
    }

    List<Message> messages(int count) {
        List<Message> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(message().build());
        }
        return out;
    }

    /**
     * Three messages whose id order (a, m, z), occurrence order (a, z, m) and enqueue order (z, a,
     * m) all disagree, in enqueue order, with the given key (or none).
     */
    List<Message> disagreeing(@Nullable String key) {
        Instant base =
                clock.wallAtStart().truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofHours(2));
        String tag = clock.idPrefix() + clock.skipIds(3);
        return List.of(
                message().id(tag + "-z").key(key).occurredAt(base.plusSeconds(2)).build(),
                message().id(tag + "-a").key(key).occurredAt(base.plusSeconds(1)).build(),
                message().id(tag + "-m").key(key).occurredAt(base.plusSeconds(3)).build());
    }

    /**
     * What to add to a failure where a claim returned less than it should: a store whose enqueue
     * clock runs ahead of the kit's makes fresh messages look delayed.
     */
    Object skewHint(List<Delivery> got) {
        return skewHint(got.isEmpty());
    }

    /**
     * The hint is worked out only when a failure message is written (its {@code toString()}), so a
     * passing rule never pays for it: nothing claimable right after an enqueue is blamed on the
     * store's clock only when a claim a little later finds a fresh message stamped after the claim
     * instant, which only a clock running ahead explains. That probe leases what it finds, which no
     * longer matters once the rule has failed.
     */
    Object skewHint(boolean nothingClaimed) {
        if (!nothingClaimed) {
            return "";
        }
        Instant claimedAt = now();
        return new Object() {
            private String text = "";
            private boolean worked;

            @Override
            public synchronized String toString() {
                if (!worked) {
                    worked = true;
                    text = skewEvidence(claimedAt);
                }
                return text;
            }
        };
    }

    String skewEvidence(Instant claimedAt) {
        List<Delivery> later;
        try {
            later =
                    store().claim(
                                    new ClaimRequest(
                                            "tck-clock-probe",
                                            claimedAt.plus(SKEW_PROBE),
                                            LEASE,
                                            ClaimRequest.MAX_LIMIT));
        } catch (RuntimeException e) {
            return "";
        }
        return later.stream()
                .filter(d -> d.attempt() == 1 && d.enqueuedAt().isAfter(claimedAt))
                .findFirst()
                .map(
                        d ->
                                String.format(
                                        " (nothing was claimable at %s, and a claim %s later found"
                                                + " '%s' on its first attempt stamped enqueuedAt=%s,"
                                                + " after that instant: your store's enqueue clock runs"
                                                + " more than clockSkewTolerance() = %s ahead of this"
                                                + " JVM's clock; raise clockSkewTolerance())",
                                        claimedAt,
                                        SKEW_PROBE,
                                        d.message().id(),
                                        d.enqueuedAt(),
                                        clockSkewTolerance()))
                .orElse("");
    }

    /**
     * Enqueues {@code m} in a committed transaction and claims it as {@link #OWNER_A} on {@link
     * #store()}: the lease most rules start from. The kit's clock stays at the claim's instant.
     */
    Delivery leasedByOwnerA(Message m) {
        committed(m);
        return claimOne(store(), OWNER_A, m);
    }

    /**
     * Enqueues two messages in one committed transaction and claims both as {@link #OWNER_A} on
     * {@link #store()}, in whatever order the store lists them.
     */
    List<Delivery> leasedByOwnerA(Message first, Message second) {
        committed(first, second);
        List<Delivery> got = claimAll(store(), OWNER_A);
        assertThat(ids(got))
                .as("a claim must lease both available messages%s", skewHint(got))
                .containsExactlyInAnyOrder(first.id(), second.id());
        return got;
    }

    /** Claims exactly the one message expected to be available. */
    Delivery claimOne(OutboxStore on, String owner, Message expected) {
        List<Delivery> got = claimAll(on, owner);
        assertThat(ids(got))
                .as(
                        "claim at %s by %s must lease exactly the available message '%s', but your store returned %s%s",
                        now(), owner, expected.id(), deliveries(got), skewHint(got))
                .containsExactly(expected.id());
        return got.get(0);
    }

    /** Claims with a limit and checks that exactly these messages came back, in this order. */
    List<Delivery> claimExactly(
            OutboxStore on, String owner, int limit, List<Message> expected, String why) {
        List<Delivery> got = claim(on, owner, limit);
        assertThat(ids(got))
                .as(
                        "claim(limit=%d) by %s at %s must lease exactly %s in this order (%s), but your"
                                + " store returned %s%s",
                        limit, owner, now(), idsOf(expected), why, deliveries(got), skewHint(got))
                .containsExactlyElementsOf(idsOf(expected));
        return got;
    }

    /**
     * Claims everything and checks that the first delivery is {@code head} and that the rest, if
     * any, is a prefix of {@code mayFollow} (later messages of its key may come in the same claim,
     * after it).
     */
    List<Delivery> claimHeadFirst(
            OutboxStore on, String owner, Message head, List<Message> mayFollow, String why) {
        List<Delivery> got = claimAll(on, owner);
        List<String> allowed = new ArrayList<>();
        allowed.add(head.id());
        allowed.addAll(idsOf(mayFollow));
        List<String> ids = ids(got);
        boolean ok =
                !ids.isEmpty()
                        && allowed.subList(0, Math.min(ids.size(), allowed.size())).equals(ids)
                        && ids.size() <= allowed.size();
        assertThat(ok)
                .as(
                        "claim by %s at %s must lease '%s' first (%s); later messages of its key %s may"
                                + " only follow it, in enqueue order; but your store returned %s%s",
                        owner,
                        now(),
                        head.id(),
                        why,
                        idsOf(mayFollow),
                        deliveries(got),
                        skewHint(got))
                .isTrue();
        return got;
    }

    void assertNothingClaimable(OutboxStore on, String owner, String why) {
        List<Delivery> got = claimAll(on, owner);
        assertThat(got)
                .as(
                        "claim by %s at %s must return nothing because %s, but your store leased %s",
                        owner, now(), why, deliveries(got))
                .isEmpty();
    }

    void assertCompletes(OutboxStore on, String owner, Delivery delivery, String why) {
        Set<String> stale = on.complete(new Completion(owner, List.of(delivery.receipt())));
        assertThat(stale)
                .as(
                        "complete by %s of '%s' with its live receipt must succeed (%s), but your store "
                                + "reported the receipt stale",
                        owner, delivery.message().id(), why)
                .isEmpty();
    }

    /**
     * Releases {@code d} through {@code on} as {@code owner}, due at {@code availableAt}, with
     * {@code error}; the release must succeed.
     */
    static void assertReleases(
            OutboxStore on, String owner, Delivery d, Instant availableAt, String error) {
        assertThat(on.release(new Release(owner, d.receipt(), availableAt, error)))
                .as("release by %s with its live receipt must return true", owner)
                .isTrue();
    }

    /** Dead-letters {@code d} now through {@code on} as {@code owner}; it must succeed. */
    void assertDeadLetters(OutboxStore on, String owner, Delivery d, String reason) {
        assertThat(on.deadLetter(new DeadLetter(owner, d.receipt(), reason, now())))
                .as("deadLetter by %s with its live receipt must return true", owner)
                .isTrue();
    }

    /** The delivery of {@code m} in a claim, which must hold it. */
    Delivery of(List<Delivery> got, Message m) {
        return got.stream()
                .filter(d -> d.message().id().equals(m.id()))
                .findFirst()
                .orElseThrow(
                        () ->
                                new AssertionError(
                                        "a claim must lease the available message '"
                                                + m.id()
                                                + "', but your store returned "
                                                + deliveries(got)
                                                + skewHint(got)));
    }

    static void assertSameMessage(Message expected, Message actual) {
        List<String> diffs = Describe.differences(expected, actual);
        assertThat(diffs)
                .as(
                        "the message '%s' must come back from claim exactly as it was enqueued, but your "
                                + "store changed it: %s",
                        expected.id(), String.join("; ", diffs))
                .isEmpty();
    }

    void assumeTransactions() {
        Optional<String> reason = transactionsUnsupported();
        Assumptions.assumeTrue(
                reason.isEmpty(),
                () -> "skipped: transactionsUnsupported() says " + reason.orElse("nothing"));
    }

    OutboxAdmin requireAdmin(String toDo) {
        Optional<OutboxAdmin> admin = admin();
        Assumptions.assumeTrue(
                admin.isPresent(),
                () ->
                        "skipped: admin() returned empty (the store under test is no OutboxAdmin and"
                                + " no admin was supplied), so the kit cannot "
                                + toDo);
        return admin.orElseThrow();
    }

    static Optional<DuplicateMessageException> duplicateIn(@Nullable Throwable thrown) {
        int depth = 0;
        for (Throwable t = thrown; t != null && depth < 32; t = t.getCause(), depth++) {
            if (t instanceof DuplicateMessageException) {
                return Optional.of((DuplicateMessageException) t);
            }
        }
        return Optional.empty();
    }
}
