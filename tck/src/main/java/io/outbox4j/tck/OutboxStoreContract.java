package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static io.outbox4j.tck.Describe.idsOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The store contract kit: one JUnit 5 test per rule of the {@link OutboxStore} contract (DESIGN
 * §6).
 *
 * <p>A store implementer extends this class in their test sources and supplies the factories: the
 * store under test ({@link #store()}, optionally a {@link #secondStore()} over the same storage), a
 * way to enqueue messages in a committed and in a rolled-back transaction, a way to empty the
 * storage, and the dead-letter reason the store kept. Every rule is a package-private test method
 * named {@code required_<rule>} or {@code optional_<rule>}, grouped by concern in {@link Nested}
 * classes, so a subclass can neither override nor hide one. A required rule that fails names what
 * the store did wrong. An optional rule the store cannot honour is skipped with the reason its
 * capability knob returns ({@link #largePayloadUnsupported()}); rules that need a rolled-back
 * transaction are skipped with the reason {@link #transactionsUnsupported()} returns, and only
 * then.
 *
 * <p>Time: every lease decision is driven by the {@link ClaimRequest#now()} the kit passes, so no
 * rule ever sleeps. The kit's clock starts at the wall clock (plus {@link #clockSkewTolerance()})
 * after each enqueue and only moves forward. A store may stamp enqueue time with its own clock (the
 * application's or the database's), but must decide leases, releases and {@code notBefore} by the
 * request's {@code now}.
 *
 * <p>Lifecycle: before each rule the kit calls {@link #resetStore()}; the subclass's own
 * {@code @BeforeEach} and {@code @BeforeAll} methods run first, so fields they set are ready. The
 * kit's own state is per test instance, as JUnit creates one per rule.
 */
public abstract class OutboxStoreContract {
    /** The lease every rule claims with, unless it says otherwise. */
    static final Duration LEASE = Duration.ofMinutes(5);

    static final String OWNER_A = "tck-owner-a";
    static final String OWNER_B = "tck-owner-b";
    static final String OWNER_C = "tck-owner-c";
    static final String UNKNOWN_RECEIPT = "tck-receipt-that-no-store-issued";

    private Instant time;
    private String idPrefix;
    private int idCounter;

    /** Creates the kit; subclasses supply the factories. */
    protected OutboxStoreContract() {}

    /**
     * Returns the store under test. Called after {@link #resetStore()} before each test; may return
     * the same instance every time.
     *
     * @return the store under test
     */
    protected abstract OutboxStore store();

    /**
     * Returns another store instance over the same storage (another connection pool, another
     * client), for the concurrency rules. The default returns {@link #store()}.
     *
     * @return a second store instance sharing the storage of {@link #store()}
     */
    protected OutboxStore secondStore() {
        return store();
    }

    /**
     * Removes every message (pending, leased and dead) from the storage. Called before each test.
     */
    protected abstract void resetStore();

    /**
     * Enqueues the messages through the store's write side in one transaction that commits.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    /**
     * Enqueues the messages through the store's write side in one transaction that is rolled back.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueRolledBack(List<Message> messages);

    /**
     * Reads the dead-letter reason the store kept for a message.
     *
     * @param messageId the message id
     * @return the reason if the message is dead-lettered, else empty
     */
    protected abstract Optional<String> deadLetterReason(String messageId);

    /**
     * Capability knob: return a reason when the store (or the server it runs against) cannot run
     * enqueue-in-transaction rules; they are then skipped with that reason, never passed.
     *
     * @return empty when transactions are supported, else why not
     */
    protected Optional<String> transactionsUnsupported() {
        return Optional.empty();
    }

    /**
     * Capability knob: return a reason when the store cannot keep a payload of {@link
     * MessageLimits#DEFAULT_MAX_PAYLOAD_BYTES} bytes (for example a key-value store whose items are
     * smaller); the rule {@code optional_payloadOfTheDefaultLimitRoundTrips} is then skipped with
     * it.
     *
     * @return empty when a 1 MiB payload is supported, else why not
     */
    protected Optional<String> largePayloadUnsupported() {
        return Optional.empty();
    }

    /**
     * How far ahead of this JVM's clock the store's enqueue clock may run (a database server's
     * clock, for example). The kit claims no earlier than the wall clock plus this tolerance after
     * each enqueue, so a message enqueued just now is available to it. The default is one second.
     *
     * @return a zero or positive tolerance
     */
    protected Duration clockSkewTolerance() {
        return Duration.ofSeconds(1);
    }

    /**
     * How many messages the concurrency rules race over. The default is 2000; lower it only for a
     * store whose test server is slow, and keep it well above the claim batch size times the
     * claimers.
     *
     * @return the message count, at least 200
     */
    protected int concurrencyMessageCount() {
        return 2000;
    }

    // ------------------------------------------------------------------------------------------------
    // Kit helpers (private: a subclass cannot change what a rule means)
    // ------------------------------------------------------------------------------------------------

    private void prepare() {
        resetStore();
        time = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        idPrefix = "tck-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        idCounter = 0;
        syncWithWallClock();
    }

    /** Moves the kit's clock up to the wall clock plus the tolerance, never back. */
    private Instant syncWithWallClock() {
        Duration tolerance = clockSkewTolerance();
        if (tolerance == null || tolerance.isNegative()) {
            throw new IllegalStateException(
                    "clockSkewTolerance() must be zero or positive, but was " + tolerance);
        }
        Instant wall = Instant.now().plus(tolerance).truncatedTo(ChronoUnit.MILLIS).plusMillis(1);
        if (wall.isAfter(time)) {
            time = wall;
        }
        return time;
    }

    private Instant now() {
        return time;
    }

    private Instant advance(Duration by) {
        time = time.plus(by);
        return time;
    }

    private Instant advanceTo(Instant to) {
        if (to.isBefore(time)) {
            throw new IllegalStateException("kit clock would move back from " + time + " to " + to);
        }
        time = to;
        return time;
    }

    private String nextId() {
        return idPrefix + (++idCounter);
    }

    private Message.Builder message() {
        String id = nextId();
        return Message.builder()
                .id(id)
                .topic("tck.orders")
                .module("tck")
                .contentType("text/plain; charset=utf-8")
                .payload("payload of " + id);
    }

    private List<Message> messages(int count) {
        List<Message> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(message().build());
        }
        return out;
    }

    /**
     * Enqueues in one committed transaction, then lets the kit's clock catch up with the enqueue
     * time.
     */
    private void committed(Message... messages) {
        committed(List.of(messages));
    }

    private void committed(List<Message> messages) {
        enqueueCommitted(messages);
        syncWithWallClock();
    }

    private List<Delivery> claim(OutboxStore on, String owner, int limit) {
        return on.claim(new ClaimRequest(owner, time, LEASE, limit));
    }

    private List<Delivery> claimAll(OutboxStore on, String owner) {
        return claim(on, owner, ClaimRequest.MAX_LIMIT);
    }

    /** Claims exactly the one message expected to be available. */
    private Delivery claimOne(OutboxStore on, String owner, Message expected) {
        List<Delivery> got = claimAll(on, owner);
        assertThat(ids(got))
                .as(
                        "claim at %s by %s must lease exactly the available message '%s', but your store returned %s",
                        time, owner, expected.id(), deliveries(got))
                .containsExactly(expected.id());
        return got.get(0);
    }

    private void assertNothingClaimable(OutboxStore on, String owner, String why) {
        List<Delivery> got = claimAll(on, owner);
        assertThat(got)
                .as(
                        "claim by %s at %s must return nothing because %s, but your store leased %s",
                        owner, time, why, deliveries(got))
                .isEmpty();
    }

    private void assertCompletes(OutboxStore on, String owner, Delivery delivery, String why) {
        Set<String> stale = on.complete(new Completion(owner, List.of(delivery.receipt())));
        assertThat(stale)
                .as(
                        "complete by %s of '%s' with its live receipt must succeed (%s), but your store "
                                + "reported the receipt stale",
                        owner, delivery.message().id(), why)
                .isEmpty();
    }

    private static void assertSameMessage(Message expected, Message actual) {
        List<String> diffs = Describe.differences(expected, actual);
        assertThat(diffs)
                .as(
                        "the message '%s' must come back from claim exactly as it was enqueued, but your "
                                + "store changed it: %s",
                        expected.id(), String.join("; ", diffs))
                .isEmpty();
    }

    private void assumeTransactions() {
        Optional<String> reason = transactionsUnsupported();
        Assumptions.assumeTrue(
                reason.isEmpty(),
                () -> "skipped: transactionsUnsupported() says " + reason.orElse("nothing"));
    }

    private static Optional<DuplicateMessageException> duplicateIn(Throwable thrown) {
        int depth = 0;
        for (Throwable t = thrown; t != null && depth < 32; t = t.getCause(), depth++) {
            if (t instanceof DuplicateMessageException) {
                return Optional.of((DuplicateMessageException) t);
            }
        }
        return Optional.empty();
    }

    /**
     * Base of every rule group: empties the storage and starts the kit's clock before each rule.
     */
    abstract class Rules {
        @BeforeEach
        void resetStoreAndClock() {
            prepare();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Enqueue
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Enqueue")
    class Enqueue extends Rules {
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
                                    + "but your store returned %s",
                            idsOf(sent), deliveries(got))
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
        void required_rolledBackEnqueueIsNeverClaimable() {
            assumeTransactions();
            List<Message> rolledBack = messages(2);
            Message kept = message().build();
            enqueueRolledBack(rolledBack);
            committed(kept);
            List<Delivery> got = claimAll(store(), OWNER_A);
            assertThat(ids(got))
                    .as(
                            "messages enqueued in a transaction that rolled back (%s) must never be "
                                    + "claimable; only '%s' was committed, but your store returned %s",
                            idsOf(rolledBack), kept.id(), deliveries(got))
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
            assertThat(duplicateIn(thrown))
                    .as(
                            "enqueueing a second message with id '%s' must be rejected with a "
                                    + "DuplicateMessageException (message ids are unique per outbox), but your store %s",
                            original.id(),
                            thrown == null ? "accepted it silently" : "threw " + thrown)
                    .isPresent();
            assertThat(duplicateIn(thrown).get().messageId())
                    .as("the DuplicateMessageException must name the " + "duplicate id")
                    .isEqualTo(original.id());
            syncWithWallClock();
            Delivery kept = claimOne(store(), OWNER_A, original);
            assertSameMessage(original, kept.message());
        }

        @Test
        @DisplayName(
                "a batch that holds the same id twice is rejected with DuplicateMessageException")
        void required_duplicateIdWithinOneBatchIsRejected() {
            Message first = message().build();
            Message again = first.toBuilder().payload("same id, second in the batch").build();
            Throwable thrown =
                    catchThrowable(
                            () -> enqueueCommitted(List.of(first, message().build(), again)));
            assertThat(duplicateIn(thrown))
                    .as(
                            "enqueueing a batch that holds id '%s' twice must be rejected with "
                                    + "a DuplicateMessageException, but your store %s",
                            first.id(), thrown == null ? "accepted it silently" : "threw " + thrown)
                    .isPresent();
        }

        @Test
        @DisplayName("a batch rejected for a duplicate id leaves none of its messages behind")
        void required_rejectedBatchLeavesNothingBehind() {
            assumeTransactions();
            Message existing = message().build();
            committed(existing);
            Message before = message().build();
            Message after = message().build();
            Message duplicate = existing.toBuilder().payload("duplicate").build();
            Throwable thrown =
                    catchThrowable(() -> enqueueCommitted(List.of(before, duplicate, after)));
            assertThat(duplicateIn(thrown))
                    .as(
                            "a batch holding the existing id '%s' must be rejected with a "
                                    + "DuplicateMessageException, but your store %s",
                            existing.id(),
                            thrown == null ? "accepted it silently" : "threw " + thrown)
                    .isPresent();
            syncWithWallClock();
            List<Delivery> got = claimAll(store(), OWNER_A);
            assertThat(ids(got))
                    .as(
                            "enqueueAll is all or nothing: after the batch [%s, %s, %s] was rejected, "
                                    + "only '%s' may be claimable, but your store returned %s",
                            before.id(), duplicate.id(), after.id(), existing.id(), deliveries(got))
                    .containsExactly(existing.id());
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
                    store(),
                    OWNER_A,
                    "'" + delayed.id() + "' has notBefore=" + due + ", 1 ms later");
            advanceTo(due);
            claimOne(store(), OWNER_A, delayed);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Claim
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Claim")
    class Claim extends Rules {
        @Test
        @DisplayName("a claim leases at most its limit, and the rest stays available")
        void required_claimHonoursTheLimit() {
            List<Message> sent = messages(5);
            committed(sent);
            List<String> seen = new ArrayList<>();
            int[] expectedSizes = {2, 2, 1, 0};
            for (int expected : expectedSizes) {
                List<Delivery> got = claim(store(), OWNER_A, 2);
                assertThat(got)
                        .as(
                                "claim(limit=2) with %d message(s) available must lease exactly %d, but your "
                                        + "store leased %d: %s",
                                sent.size() - seen.size(), expected, got.size(), deliveries(got))
                        .hasSize(expected);
                seen.addAll(ids(got));
            }
            assertThat(seen)
                    .as(
                            "successive claims must lease each of %s once, but your store leased %s",
                            idsOf(sent), seen)
                    .containsExactlyInAnyOrderElementsOf(idsOf(sent));
        }

        @Test
        @DisplayName("a claim takes the oldest available messages first")
        void required_claimTakesTheOldestFirst() {
            List<Message> sent = new ArrayList<>(messages(5));
            committed(sent.get(0));
            committed(sent.get(1));
            committed(sent.subList(2, 5));
            assertTakenInOrder(idsOf(sent), "enqueue order");
        }

        @Test
        @DisplayName(
                "a claim lists its deliveries oldest first, because the relay publishes in claim order")
        void required_claimListsItsDeliveriesOldestFirst() {
            List<Message> sent = new ArrayList<>(messages(5));
            committed(sent.get(0));
            committed(sent.get(1));
            committed(sent.subList(2, 5));
            List<Delivery> got = claim(store(), OWNER_A, 10);
            assertThat(ids(got))
                    .as(
                            "claim must list its deliveries in order of availability, then of enqueue "
                                    + "(%s), but your store listed %s",
                            idsOf(sent), ids(got))
                    .containsExactlyElementsOf(idsOf(sent));
        }

        @Test
        @DisplayName("claim order is by availability time first, then by enqueue order")
        void required_claimOrdersByAvailabilityThenEnqueueOrder() {
            Instant start = now();
            Message late = message().notBefore(start.plus(Duration.ofMinutes(2))).build();
            committed(late);
            Message a = message().build();
            committed(a);
            Message b = message().build();
            committed(b);
            Instant sameTime = start.plus(Duration.ofMinutes(1));
            Message e = message().notBefore(sameTime).build();
            Message f = message().notBefore(sameTime).build();
            committed(e, f);
            advanceTo(start.plus(Duration.ofMinutes(3)));
            assertTakenInOrder(
                    List.of(a.id(), b.id(), e.id(), f.id(), late.id()),
                    "availability (enqueue time, "
                            + "or notBefore when set) and then enqueue order: '"
                            + late.id()
                            + "' (enqueued first, "
                            + "notBefore +2 min) comes last, '"
                            + e.id()
                            + "' and '"
                            + f.id()
                            + "' (same notBefore +1 min) "
                            + "in enqueue order");
        }

        /** Claims one at a time and checks each claim took the oldest of what was left. */
        private void assertTakenInOrder(List<String> order, String why) {
            List<String> remaining = new ArrayList<>(order);
            List<String> taken = new ArrayList<>();
            while (!remaining.isEmpty()) {
                List<Delivery> got = claim(store(), OWNER_A, 1);
                assertThat(got)
                        .as("claim(limit=1) must lease something while %s are available", remaining)
                        .isNotEmpty();
                List<String> oldest = remaining.subList(0, Math.min(got.size(), remaining.size()));
                assertThat(ids(got))
                        .as(
                                "claims of one message at a time must take %s in the order %s (by %s); "
                                        + "after %s your store took %s instead of %s",
                                order.size(), order, why, taken, ids(got), oldest)
                        .containsExactlyInAnyOrderElementsOf(oldest);
                taken.addAll(ids(got));
                remaining.removeAll(ids(got));
            }
        }

        @Test
        @DisplayName("a claimed message is invisible to every other claim until its lease ends")
        void required_claimedMessageIsInvisibleToOtherClaimers() {
            Message m = message().build();
            committed(m);
            Instant claimedAt = now();
            claimOne(store(), OWNER_A, m);
            String why =
                    "owner "
                            + OWNER_A
                            + " holds a live lease on '"
                            + m.id()
                            + "' until "
                            + claimedAt.plus(LEASE);
            assertNothingClaimable(store(), OWNER_B, why);
            assertNothingClaimable(secondStore(), OWNER_B, why + " (asked through secondStore())");
            assertNothingClaimable(
                    store(), OWNER_A, why + " (the same owner must not get it twice either)");
            advanceTo(claimedAt.plus(LEASE).minusMillis(1));
            assertNothingClaimable(secondStore(), OWNER_C, why + " (1 ms before the lease ends)");
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Lease expiry
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Lease expiry")
    class LeaseExpiry extends Rules {
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
            committed(m);
            Instant claimedAt = now();
            Delivery first = claimOne(store(), OWNER_A, m);
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
            committed(m);
            Instant claimedAt = now();
            Delivery first = claimOne(store(), OWNER_A, m);
            assertThat(first.attempt())
                    .as("the first claim of '%s' must be attempt 1", m.id())
                    .isEqualTo(1);
            advanceTo(claimedAt.plus(LEASE));
            Delivery second = claimOne(store(), OWNER_B, m);
            assertThat(second.attempt())
                    .as(
                            "after the first lease ended, the next claim of '%s' must be attempt "
                                    + "2, but your store reported %d",
                            m.id(), second.attempt())
                    .isEqualTo(2);
            assertThat(store().release(new Release(OWNER_B, second.receipt(), now(), "tck: retry")))
                    .isTrue();
            Delivery third = claimOne(store(), OWNER_A, m);
            assertThat(third.attempt())
                    .as(
                            "after a release, the next claim of '%s' must be attempt 3, but your "
                                    + "store reported %d",
                            m.id(), third.attempt())
                    .isEqualTo(3);
        }

        @Test
        @DisplayName(
                "a stale receipt (lease ended, message claimed again) cannot complete the message")
        void required_staleReceiptCannotComplete() {
            Message m = message().build();
            Delivery[] leases = expireAndReclaim(m);
            Set<String> stale =
                    store().complete(new Completion(OWNER_A, List.of(leases[0].receipt())));
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
                                    new DeadLetter(
                                            OWNER_A, leases[0].receipt(), "tck: stale", now()));
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
    }

    // ------------------------------------------------------------------------------------------------
    // Complete
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Complete")
    class Complete extends Rules {
        @Test
        @DisplayName("a completed message is gone for good")
        void required_completeRemovesTheMessageForGood() {
            Message m = message().build();
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
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
            assertThat(got).as("claim must lease all 5 available messages").hasSize(5);
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
            assertThat(got).as("claim must lease all 3 available messages").hasSize(3);
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            Set<String> foreign = store().complete(new Completion(OWNER_B, List.of(d.receipt())));
            assertThat(foreign)
                    .as(
                            "complete by %s of a receipt that %s holds must report it stale (every write "
                                    + "is a compare-and-set on owner and receipt), but your store reported %s",
                            OWNER_B, OWNER_A, foreign)
                    .containsExactly(d.receipt());
            Set<String> unknown =
                    store().complete(new Completion(OWNER_A, List.of(UNKNOWN_RECEIPT)));
            assertThat(unknown)
                    .as(
                            "complete with a receipt your store never issued must report it stale, but "
                                    + "your store reported %s",
                            unknown)
                    .containsExactly(UNKNOWN_RECEIPT);
            assertNothingClaimable(
                    secondStore(), OWNER_A, OWNER_A + "'s lease on '" + m.id() + "' is still live");
            assertCompletes(
                    store(), OWNER_A, d, "the foreign and unknown completes changed nothing");
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Release
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Release")
    class ReleaseRules extends Rules {
        @Test
        @DisplayName(
                "a released message stays hidden until availableAt, then is claimable with a new receipt")
        void required_releaseHidesTheMessageUntilAvailableAt() {
            Message m = message().build();
            committed(m);
            Instant claimedAt = now();
            Delivery d = claimOne(store(), OWNER_A, m);
            Instant retryAt = claimedAt.plus(Duration.ofMinutes(10));
            assertThat(
                            store().release(
                                            new Release(
                                                    OWNER_A,
                                                    d.receipt(),
                                                    retryAt,
                                                    "tck: broker down")))
                    .as("release by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
            assertNothingClaimable(
                    store(),
                    OWNER_B,
                    "'"
                            + m.id()
                            + "' was released with availableAt="
                            + retryAt
                            + " (10 minutes later)");
            advanceTo(claimedAt.plus(LEASE).plus(Duration.ofMinutes(1)));
            assertNothingClaimable(
                    store(),
                    OWNER_B,
                    "'"
                            + m.id()
                            + "' was released with availableAt="
                            + retryAt
                            + ", which is later than the end of the lease it had");
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            assertThat(store().release(new Release(OWNER_A, d.receipt(), now(), "tck: retry now")))
                    .as("release by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            assertThat(store().release(new Release(OWNER_A, d.receipt(), now(), "tck: retry")))
                    .isTrue();
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            assertThat(store().release(new Release(OWNER_B, d.receipt(), now(), "tck: foreign")))
                    .as(
                            "release by %s of a receipt that %s holds must return false (stale), but your store "
                                    + "returned true",
                            OWNER_B, OWNER_A)
                    .isFalse();
            assertThat(
                            store().release(
                                            new Release(
                                                    OWNER_A,
                                                    UNKNOWN_RECEIPT,
                                                    now(),
                                                    "tck: unknown")))
                    .as(
                            "release with a receipt your store never issued must return false (stale), but your "
                                    + "store returned true")
                    .isFalse();
            assertNothingClaimable(
                    secondStore(), OWNER_A, OWNER_A + "'s lease on '" + m.id() + "' is still live");
            assertCompletes(
                    store(), OWNER_A, d, "the foreign and unknown releases changed nothing");
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Dead letter
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Dead letter")
    class DeadLetterRules extends Rules {
        @Test
        @DisplayName("a dead-lettered message is never claimed again")
        void required_deadLetteredMessageIsNeverClaimedAgain() {
            Message m = message().build();
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER_A,
                                                    d.receipt(),
                                                    "tck: poison message",
                                                    now())))
                    .as("deadLetter by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
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
            Delivery d =
                    got.stream()
                            .filter(x -> x.message().id().equals(parked.id()))
                            .findFirst()
                            .orElseThrow();
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER_A, d.receipt(), "tck: poison", now())))
                    .isTrue();
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER_B, d.receipt(), "tck: foreign", now())))
                    .as(
                            "deadLetter by %s of a receipt that %s holds must return false (stale), but your store "
                                    + "returned true",
                            OWNER_B, OWNER_A)
                    .isFalse();
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER_A,
                                                    UNKNOWN_RECEIPT,
                                                    "tck: unknown",
                                                    now())))
                    .as(
                            "deadLetter with a receipt your store never issued must return false (stale), but your "
                                    + "store returned true")
                    .isFalse();
            assertThat(deadLetterReason(m.id()))
                    .as("no reason may be recorded for '%s' by a stale deadLetter", m.id())
                    .isEmpty();
            assertCompletes(
                    store(), OWNER_A, d, "the foreign and unknown deadLetters changed nothing");
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Round trip
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Round trip")
    class RoundTrip extends Rules {
        private void assertRoundTrips(Message m) {
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
            assertSameMessage(m, d.message());
        }

        @Test
        @DisplayName("a binary payload (every byte value, invalid UTF-8) comes back byte for byte")
        void required_binaryPayloadRoundTripsByteForByte() {
            byte[] payload = new byte[4096 + 7];
            for (int i = 0; i < payload.length; i++) {
                payload[i] = (byte) (i * 31 + (i >> 8));
            }
            byte[] invalidUtf8 = {
                (byte) 0xc3, (byte) 0x28, (byte) 0xff, 0, (byte) 0xed, (byte) 0xa0, (byte) 0x80
            };
            System.arraycopy(invalidUtf8, 0, payload, 0, invalidUtf8.length);
            assertRoundTrips(
                    message().contentType("application/octet-stream").payload(payload).build());
        }

        @Test
        @DisplayName("an empty payload comes back empty")
        void required_emptyPayloadRoundTrips() {
            assertRoundTrips(message().payload(new byte[0]).build());
        }

        @Test
        @DisplayName("a payload of the default limit (1 MiB) comes back byte for byte")
        void optional_payloadOfTheDefaultLimitRoundTrips() {
            Optional<String> reason = largePayloadUnsupported();
            Assumptions.assumeTrue(
                    reason.isEmpty(),
                    () -> "skipped: largePayloadUnsupported() says " + reason.orElse("nothing"));
            byte[] payload = new byte[MessageLimits.DEFAULT_MAX_PAYLOAD_BYTES];
            for (int i = 0; i < payload.length; i++) {
                payload[i] = (byte) (i ^ (i >>> 9));
            }
            assertRoundTrips(
                    message().contentType("application/octet-stream").payload(payload).build());
        }

        @Test
        @DisplayName("headers come back with the same names, values and order, unicode included")
        void required_headersRoundTripInOrder() {
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("zeta", "last letter first");
            headers.put("Alpha", "mixed Case name");
            headers.put("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
            headers.put("empty", "");
            headers.put("ünïcödé-名前", "значение ✓ 😀");
            headers.put("spaces", "  value with spaces inside and around  ");
            headers.put("beta", "b");
            assertRoundTrips(message().headers(headers).build());
        }

        @Test
        @DisplayName("a key comes back when present and stays absent when not")
        void required_keyRoundTripsWhenPresentAndAbsent() {
            Message keyed = message().key("customer-42/ordre-ß").build();
            Message unkeyed = message().build();
            committed(keyed, unkeyed);
            List<Delivery> got = claimAll(store(), OWNER_A);
            assertThat(ids(got)).containsExactlyInAnyOrder(keyed.id(), unkeyed.id());
            for (Delivery d : got) {
                assertSameMessage(
                        d.message().id().equals(keyed.id()) ? keyed : unkeyed, d.message());
            }
        }

        @Test
        @DisplayName(
                "topic, module, content type, occurredAt and notBefore come back exactly (microseconds included)")
        void required_metadataRoundTrips() {
            Instant occurred = Instant.parse("2021-03-04T05:06:07.123456Z");
            Instant notBefore =
                    now().minus(Duration.ofSeconds(3))
                            .truncatedTo(ChronoUnit.SECONDS)
                            .plusNanos(654_321_000);
            assertRoundTrips(
                    message()
                            .topic("tck.orders.v2-créées")
                            .module("billing-module/ünï")
                            .contentType("application/vnd.tck+json; charset=UTF-8; profile=\"x y\"")
                            .occurredAt(occurred)
                            .notBefore(notBefore)
                            .payload("{\"n\":1}")
                            .build());
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Concurrency
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Concurrency")
    class Concurrency extends Rules {
        private static final int CLAIMERS = 4;
        private static final int MAX_VIOLATIONS = 20;
        private final List<String> violations = Collections.synchronizedList(new ArrayList<>());

        private List<Message> enqueueMany() {
            int count = concurrencyMessageCount();
            if (count < 200) {
                throw new IllegalStateException(
                        "concurrencyMessageCount() must be at least 200, but was " + count);
            }
            List<Message> all = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                all.add(message().payload("concurrent " + i).build());
            }
            for (int from = 0; from < count; from += 500) {
                enqueueCommitted(all.subList(from, Math.min(count, from + 500)));
            }
            syncWithWallClock();
            return all;
        }

        private void violation(String text) {
            if (violations.size() < MAX_VIOLATIONS) {
                violations.add(text);
            }
        }

        private void race(Worker worker) throws Exception {
            ExecutorService pool = Executors.newFixedThreadPool(CLAIMERS);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> futures = new ArrayList<>();
                for (int i = 0; i < CLAIMERS; i++) {
                    OutboxStore on = i % 2 == 0 ? store() : secondStore();
                    String owner = "tck-claimer-" + i;
                    futures.add(
                            pool.submit(
                                    () -> {
                                        go.await();
                                        worker.run(on, owner);
                                        return null;
                                    }));
                }
                go.countDown();
                for (Future<?> f : futures) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
        }

        @Test
        @DisplayName(
                "claimers racing on two store instances never share a message, and every message is claimed once")
        void required_concurrentClaimersNeverShareAMessage() throws Exception {
            List<Message> all = enqueueMany();
            Instant at = now();
            Map<String, String> holder = new ConcurrentHashMap<>();
            AtomicInteger handedOut = new AtomicInteger();
            race(
                    (on, owner) -> {
                        while (violations.size() < MAX_VIOLATIONS
                                && handedOut.get() <= 2 * all.size()) {
                            List<Delivery> got =
                                    on.claim(new ClaimRequest(owner, at, Duration.ofHours(1), 25));
                            if (got.isEmpty()) {
                                return;
                            }
                            handedOut.addAndGet(got.size());
                            for (Delivery d : got) {
                                String previous = holder.putIfAbsent(d.message().id(), owner);
                                if (previous != null) {
                                    violation(
                                            "'"
                                                    + d.message().id()
                                                    + "' was handed to "
                                                    + owner
                                                    + " while "
                                                    + previous
                                                    + " still held a live lease on it");
                                }
                            }
                        }
                    });
            assertThat(violations)
                    .as(
                            "%d claimers raced over %d messages with 1-hour leases; a message must never "
                                    + "be handed to two live leases, but your store did so: %s",
                            CLAIMERS, all.size(), violations)
                    .isEmpty();
            List<String> lost =
                    idsOf(all).stream().filter(id -> !holder.containsKey(id)).limit(10).toList();
            assertThat(holder)
                    .as(
                            "every one of the %d messages must be claimed exactly once by the racing "
                                    + "claimers, but your store never handed out %d of them (first: %s)",
                            all.size(), all.size() - holder.size(), lost)
                    .hasSize(all.size());
        }

        @Test
        @DisplayName(
                "claimers that complete and release concurrently lose nothing and finish each message once")
        void required_concurrentClaimCompleteAndReleaseLoseNothing() throws Exception {
            List<Message> all = enqueueMany();
            Instant at = now();
            Map<String, String> holder = new ConcurrentHashMap<>();
            Set<String> completed = ConcurrentHashMap.newKeySet();
            Set<String> releasedOnce = ConcurrentHashMap.newKeySet();
            AtomicInteger inFlight = new AtomicInteger();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            race(
                    (on, owner) -> {
                        while (violations.size() < MAX_VIOLATIONS) {
                            if (System.nanoTime() > deadline) {
                                violation(
                                        owner
                                                + " gave up after 60 s with "
                                                + completed.size()
                                                + " of "
                                                + all.size()
                                                + " messages completed");
                                return;
                            }
                            boolean idle = inFlight.get() == 0;
                            List<Delivery> got =
                                    on.claim(new ClaimRequest(owner, at, Duration.ofHours(1), 10));
                            if (got.isEmpty()) {
                                if (idle) {
                                    return;
                                }
                                Thread.yield();
                                continue;
                            }
                            inFlight.addAndGet(got.size());
                            List<String> toComplete = new ArrayList<>();
                            for (Delivery d : got) {
                                String id = d.message().id();
                                String previous = holder.putIfAbsent(id, owner);
                                if (previous != null) {
                                    violation(
                                            "'"
                                                    + id
                                                    + "' was handed to "
                                                    + owner
                                                    + " while "
                                                    + previous
                                                    + " still held a live lease on it");
                                }
                                if (completed.contains(id)) {
                                    violation(
                                            "'"
                                                    + id
                                                    + "' was handed to "
                                                    + owner
                                                    + " after it was completed");
                                }
                                if (Math.floorMod(id.hashCode(), 4) == 0 && releasedOnce.add(id)) {
                                    holder.remove(id, owner);
                                    if (!on.release(
                                            new Release(
                                                    owner,
                                                    d.receipt(),
                                                    at,
                                                    "tck: simulated failure"))) {
                                        violation(
                                                "release by "
                                                        + owner
                                                        + " of its live lease on '"
                                                        + id
                                                        + "' was reported stale");
                                    }
                                    inFlight.decrementAndGet();
                                } else {
                                    toComplete.add(d.receipt());
                                }
                            }
                            if (!toComplete.isEmpty()) {
                                Set<String> stale = on.complete(new Completion(owner, toComplete));
                                if (!stale.isEmpty()) {
                                    violation(
                                            "complete by "
                                                    + owner
                                                    + " of "
                                                    + toComplete.size()
                                                    + " live leases reported "
                                                    + stale.size()
                                                    + " stale");
                                }
                                for (Delivery d : got) {
                                    if (toComplete.contains(d.receipt())
                                            && !completed.add(d.message().id())) {
                                        violation("'" + d.message().id() + "' was completed twice");
                                    }
                                }
                                inFlight.addAndGet(-toComplete.size());
                            }
                        }
                    });
            assertThat(violations)
                    .as(
                            "%d claimers completed (and released a quarter of) %d messages "
                                    + "concurrently; your store broke the contract: %s",
                            CLAIMERS, all.size(), violations)
                    .isEmpty();
            List<String> lost =
                    idsOf(all).stream().filter(id -> !completed.contains(id)).limit(10).toList();
            assertThat(completed)
                    .as(
                            "every one of the %d messages must be completed exactly once, but %d were "
                                    + "never handed out again or lost (first: %s)",
                            all.size(), all.size() - completed.size(), lost)
                    .hasSize(all.size());
        }
    }

    /** One racing claimer's loop. */
    @FunctionalInterface
    private interface Worker {
        void run(OutboxStore on, String owner) throws Exception;
    }

    /** A human-readable summary of the kit's clock, for debugging a failing subclass. */
    @Override
    public String toString() {
        return getClass().getSimpleName() + "[kit clock " + time + ", ids " + idPrefix + "*]";
    }
}
