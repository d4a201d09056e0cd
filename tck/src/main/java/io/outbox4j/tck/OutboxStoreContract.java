package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static io.outbox4j.tck.Describe.idsOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
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
import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The store contract kit: one JUnit 5 test per rule of the {@link OutboxStore} contract ({@code
 * docs/architecture.md} §4.3 and §7.1, {@code docs/per-key-order.md}).
 *
 * <p>A store implementer extends this class in their test sources and supplies the factories: the
 * store under test ({@link #store()}, optionally a {@link #secondStore()} over the same storage), a
 * way to enqueue messages in a committed and in a rolled-back transaction (with {@link
 * io.outbox4j.api.Outbox#enqueueAll} and with {@link io.outbox4j.api.Outbox#enqueue}), and a way to
 * empty the storage. Every rule is a package-private test method named {@code required_<rule>} or
 * {@code optional_<rule>}, grouped by concern in {@link Nested} classes, so a subclass can neither
 * override nor hide one. A required rule is never skipped; when it fails it names what the store
 * did wrong. An optional rule runs unless a capability knob or an optional factory says the store
 * (or its test server) cannot run it; it is then skipped with a message that names that knob:
 *
 * <ul>
 *   <li>{@link #transactionsUnsupported()}: the rules that need a rolled-back transaction or a
 *       rejected batch inside one transaction;
 *   <li>{@link #largePayloadUnsupported()}: the 1 MiB payload rule;
 *   <li>{@link #admin()}: the rules that replay or discard a dead letter to unblock its key;
 *   <li>{@link #storeWhereDeadLettersDoNotBlock()}: the rule for the store option under which dead
 *       letters do not block their key;
 *   <li>{@link #enqueueCommittingDespiteFailure(List)}: the rule for a caller who catches the
 *       rejection of a batch and commits anyway.
 * </ul>
 *
 * <p>{@link #store()} must be built with the store's defaults: in particular dead letters block
 * their key there.
 *
 * <p>Time: every lease decision is driven by the {@link ClaimRequest#now()} the kit passes, so no
 * rule ever sleeps. The kit's clock starts at the wall clock (plus {@link #clockSkewTolerance()})
 * after each enqueue and only moves forward. A store may stamp enqueue time with its own clock (the
 * application's or the database's), but must decide leases, releases and {@code notBefore} by the
 * request's {@code now}.
 *
 * <p>Test data: ids, {@code occurredAt} and enqueue order never agree (ids are not ascending and
 * {@code occurredAt} zigzags), so a store that orders by id or by occurrence instead of by enqueue
 * order fails.
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

    /** Letters that make id order disagree with enqueue order (see {@link #nextId()}). */
    private static final String ID_LETTERS = "qbxfmazkdt";

    private Instant time;

    /** How much later than a failed claim the clock probe of {@link #skewHint} claims. */
    private static final Duration SKEW_PROBE = Duration.ofSeconds(59);

    private Instant wallAtStart;
    private String idPrefix;
    private int idCounter;
    private int keyCounter;

    /** Creates the kit; subclasses supply the factories. */
    protected OutboxStoreContract() {}

    /**
     * Returns the store under test, built with the store's defaults. Called after {@link
     * #resetStore()} before each test; may return the same instance every time.
     *
     * @return the store under test
     */
    protected abstract OutboxStore store();

    /**
     * Returns another store instance over the same storage (another connection pool, another
     * client), for the rules about several relays. The default returns {@link #store()}.
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
     * Enqueues the messages through the store's write side ({@link
     * io.outbox4j.api.Outbox#enqueueAll}) in one transaction that commits. If {@code enqueueAll}
     * throws, let the exception through and roll the transaction back.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    /**
     * Enqueues one message through the single form of the store's write side ({@link
     * io.outbox4j.api.Outbox#enqueue}, not {@code enqueueAll}) in a transaction that commits. If
     * {@code enqueue} throws, let the exception through and roll the transaction back.
     *
     * @param message the message
     */
    protected abstract void enqueueOneCommitted(Message message);

    /**
     * Enqueues the messages through the store's write side in one transaction that is rolled back.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueRolledBack(List<Message> messages);

    /**
     * Optional factory: enqueues the messages with {@code enqueueAll} in one transaction and, when
     * that throws, catches the exception, <b>commits the transaction anyway</b> (as a caller who
     * handles a duplicate id and carries on would) and then rethrows the caught exception. Used by
     * {@code optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind}, which is skipped,
     * naming this method, while it is not overridden. (If your database cannot commit after a
     * rejected write, add the commit's failure to the rethrown exception as suppressed.)
     *
     * @param messages the messages, in order
     */
    protected void enqueueCommittingDespiteFailure(List<Message> messages) {
        throw NotSupplied.COMMITTING_DESPITE_FAILURE.get();
    }

    /**
     * The operator's port of the store under test, over the same storage; rules that replay or
     * discard a dead letter need it and are skipped, naming this method, when it is empty. The
     * default returns {@link #store()} when it implements {@link OutboxAdmin}.
     *
     * @return the admin port, or empty
     */
    protected Optional<OutboxAdmin> admin() {
        return store() instanceof OutboxAdmin a ? Optional.of(a) : Optional.empty();
    }

    /**
     * Another store instance over the same storage, built with the store's option under which dead
     * letters do not block the later messages of their key. Empty (the default) skips {@code
     * optional_deadLettersDoNotBlockWhenTheStoreIsBuiltSo}, naming this method.
     *
     * @return the store built with that option, or empty when the store has no such option
     */
    protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
        return Optional.empty();
    }

    /**
     * Reads the dead-letter reason the store kept for a message. The default reads it through
     * {@link #admin()} ({@link OutboxAdmin#deadLetters}); override it only for a store without an
     * admin port.
     *
     * @param messageId the message id
     * @return the reason if the message is dead-lettered, else empty
     */
    protected Optional<String> deadLetterReason(String messageId) {
        OutboxAdmin admin =
                admin().orElseThrow(
                                () ->
                                        new IllegalStateException(
                                                "the kit reads dead-letter reasons through admin(),"
                                                        + " which is empty: let admin() return the"
                                                        + " store's OutboxAdmin or override"
                                                        + " deadLetterReason(String)"));
        DeadLetterQuery query = DeadLetterQuery.all().limit(DeadLetterQuery.MAX_LIMIT);
        while (true) {
            DeadLetterPage page = admin.deadLetters(query);
            for (DeadMessage m : page.items()) {
                if (m.message().id().equals(messageId)) {
                    return Optional.of(m.reason());
                }
            }
            if (page.next().isEmpty() || page.items().isEmpty()) {
                return Optional.empty();
            }
            query = query.after(page.next().get());
        }
    }

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
     * How far the store's enqueue clock (a database server's clock, for example) may differ from
     * this JVM's clock. The kit claims no earlier than the wall clock plus this tolerance after
     * each enqueue, so a message enqueued just now is available to it, and accepts enqueue times
     * that far before the test started. The default is one second.
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

    /** Thrown by an optional factory that a subclass did not override. */
    static final class NotSupplied extends UnsupportedOperationException {
        private static final long serialVersionUID = 1L;

        static final Supplier<NotSupplied> COMMITTING_DESPITE_FAILURE =
                () ->
                        new NotSupplied(
                                "enqueueCommittingDespiteFailure(List) is not overridden, so the kit"
                                        + " cannot commit a transaction in which a batch was"
                                        + " rejected");

        NotSupplied(String message) {
            super(message);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Kit helpers (private: a subclass cannot change what a rule means)
    // ------------------------------------------------------------------------------------------------

    private void prepare() {
        resetStore();
        wallAtStart = Instant.now();
        time = wallAtStart.truncatedTo(ChronoUnit.MILLIS);
        idPrefix = "tck-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        idCounter = 0;
        keyCounter = 0;
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

    /**
     * A fresh id: the prefix, a letter that scrambles the order, and a counter, so that sorting ids
     * never gives enqueue order (b1, x2, f3, …).
     */
    private String nextId() {
        idCounter++;
        return idPrefix + ID_LETTERS.charAt(idCounter % ID_LETTERS.length()) + idCounter;
    }

    /** A fresh ordering key of this rule. */
    private String nextKey() {
        return idPrefix + "key-" + (++keyCounter);
    }

    /**
     * A message with a fresh id and an {@code occurredAt} that zigzags (+1 s, −2 s, +3 s, …), so
     * that occurrence order is neither enqueue order nor its reverse.
     */
    private Message.Builder message() {
        String id = nextId();
        long zigzag = idCounter % 2 == 0 ? -idCounter : idCounter;
        return Message.builder()
                .id(id)
                .topic("tck.orders")
                .module("tck")
                .contentType("text/plain; charset=utf-8")
                .occurredAt(
                        wallAtStart
                                .truncatedTo(ChronoUnit.SECONDS)
                                .minus(Duration.ofHours(1))
                                .plusSeconds(zigzag))
                .payload("payload of " + id);
    }

    private Message keyed(String key) {
        return message().key(key).build();
    }

    private List<Message> messages(int count) {
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
    private List<Message> disagreeing(String key) {
        Instant base = wallAtStart.truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofHours(2));
        idCounter += 3;
        String tag = idPrefix + idCounter;
        return List.of(
                message().id(tag + "-z").key(key).occurredAt(base.plusSeconds(2)).build(),
                message().id(tag + "-a").key(key).occurredAt(base.plusSeconds(1)).build(),
                message().id(tag + "-m").key(key).occurredAt(base.plusSeconds(3)).build());
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

    /**
     * What to add to a failure where a claim returned less than it should: a store whose enqueue
     * clock runs ahead of the kit's makes fresh messages look delayed.
     */
    private Object skewHint(List<Delivery> got) {
        return skewHint(got.isEmpty());
    }

    /**
     * The hint is worked out only when a failure message is written (its {@code toString()}), so a
     * passing rule never pays for it: nothing claimable right after an enqueue is blamed on the
     * store's clock only when a claim a little later finds a fresh message stamped after the claim
     * instant, which only a clock running ahead explains. That probe leases what it finds, which no
     * longer matters once the rule has failed.
     */
    private Object skewHint(boolean nothingClaimed) {
        if (!nothingClaimed) {
            return "";
        }
        Instant claimedAt = time;
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

    private String skewEvidence(Instant claimedAt) {
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

    /** Claims exactly the one message expected to be available. */
    private Delivery claimOne(OutboxStore on, String owner, Message expected) {
        List<Delivery> got = claimAll(on, owner);
        assertThat(ids(got))
                .as(
                        "claim at %s by %s must lease exactly the available message '%s', but your store returned %s%s",
                        time, owner, expected.id(), deliveries(got), skewHint(got))
                .containsExactly(expected.id());
        return got.get(0);
    }

    /** Claims with a limit and checks that exactly these messages came back, in this order. */
    private List<Delivery> claimExactly(
            OutboxStore on, String owner, int limit, List<Message> expected, String why) {
        List<Delivery> got = claim(on, owner, limit);
        assertThat(ids(got))
                .as(
                        "claim(limit=%d) by %s at %s must lease exactly %s in this order (%s), but your"
                                + " store returned %s%s",
                        limit, owner, time, idsOf(expected), why, deliveries(got), skewHint(got))
                .containsExactlyElementsOf(idsOf(expected));
        return got;
    }

    /**
     * Claims everything and checks that the first delivery is {@code head} and that the rest, if
     * any, is a prefix of {@code mayFollow} (later messages of its key may come in the same claim,
     * after it).
     */
    private List<Delivery> claimHeadFirst(
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
                        time,
                        head.id(),
                        why,
                        idsOf(mayFollow),
                        deliveries(got),
                        skewHint(got))
                .isTrue();
        return got;
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

    /** The delivery of {@code m} in a claim, which must hold it. */
    private Delivery of(List<Delivery> got, Message m) {
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

    private OutboxAdmin requireAdmin(String toDo) {
        Optional<OutboxAdmin> admin = admin();
        Assumptions.assumeTrue(
                admin.isPresent(),
                () ->
                        "skipped: admin() returned empty (the store under test is no OutboxAdmin and"
                                + " no admin was supplied), so the kit cannot "
                                + toDo);
        return admin.orElseThrow();
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
        void optional_rejectedBatchLeavesNothingBehind() {
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
                                    + "only '%s' may be claimable, but your store returned %s%s",
                            before.id(),
                            duplicate.id(),
                            after.id(),
                            existing.id(),
                            deliveries(got),
                            skewHint(got.isEmpty()))
                    .containsExactly(existing.id());
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
            assertThat(duplicateIn(thrown))
                    .as(
                            "enqueue (the single form) of a second message with id '%s' must be rejected"
                                    + " with a DuplicateMessageException, but your store %s",
                            one.id(), thrown == null ? "accepted it silently" : "threw " + thrown)
                    .isPresent();
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
            Throwable thrown;
            try {
                enqueueCommittingDespiteFailure(List.of(before, duplicate, after));
                thrown = null;
            } catch (NotSupplied e) {
                Assumptions.abort("skipped: " + e.getMessage());
                return;
            } catch (RuntimeException e) {
                thrown = e;
            }
            assertThat(duplicateIn(thrown))
                    .as(
                            "a batch holding the existing id '%s' must be rejected with a"
                                    + " DuplicateMessageException, but your store %s",
                            existing.id(),
                            thrown == null ? "accepted it silently" : "threw " + thrown)
                    .isPresent();
            syncWithWallClock();
            List<Delivery> got = claimAll(store(), OWNER_A);
            assertThat(ids(got))
                    .as(
                            "enqueueAll is all or nothing even for a caller who catches the"
                                    + " DuplicateMessageException and commits: after the batch [%s, %s, %s]"
                                    + " was rejected and the transaction committed, only '%s' may be"
                                    + " claimable, but your store returned %s (it left part of the rejected"
                                    + " batch in the caller's transaction)%s",
                            before.id(),
                            duplicate.id(),
                            after.id(),
                            existing.id(),
                            deliveries(got),
                            skewHint(got.isEmpty()))
                    .containsExactly(existing.id());
        }

        @Test
        @DisplayName(
                "a delivery carries when the store accepted the message, which stays the same on every claim")
        void required_deliveryCarriesTheEnqueueTime() {
            Instant before = Instant.now();
            Message m = message().build();
            committed(m);
            Instant claimedAt = now();
            Delivery first = claimOne(store(), OWNER_A, m);
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
            assertThat(at.getNano() % 1000)
                    .as(
                            "Delivery.enqueuedAt has microsecond precision at most, but your store said %s",
                            at)
                    .isZero();
            assertThat(store().release(new Release(OWNER_A, first.receipt(), now(), "tck: retry")))
                    .as("release by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
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
                    .anyMatch(t -> t.getNano() != 0);
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
                                        + "store leased %d: %s%s",
                                sent.size() - seen.size(),
                                expected,
                                got.size(),
                                deliveries(got),
                                skewHint(got))
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
        @DisplayName("a claim fills a limit above a hundred, not only a first page")
        void required_claimFillsALimitAboveAHundred() {
            List<Message> sent = messages(250);
            committed(sent);
            List<Delivery> got = claim(store(), OWNER_A, 250);
            assertThat(ids(got))
                    .as(
                            "claim(limit=250) with 250 messages available must lease all 250 in"
                                    + " enqueue order (a relay claims up to its batch size, 500 by"
                                    + " default), but your store leased %d%s%s",
                            got.size(),
                            got.size() < 250 && got.size() > 0
                                    ? ": does it read one page of " + got.size() + " rows only?"
                                    : "",
                            skewHint(got))
                    .containsExactlyElementsOf(idsOf(sent));
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
                                    + "(%s), but your store listed %s%s",
                            idsOf(sent), ids(got), skewHint(got))
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

        @Test
        @DisplayName(
                "a notBefore in the past is the message's availability: it keeps its place, ahead of messages available later")
        void required_pastNotBeforeKeepsItsPlace() {
            Message early = message().build();
            committed(early);
            Instant anHourAgo = now().minus(Duration.ofHours(1));
            Message past = message().notBefore(anHourAgo).build();
            committed(past);
            Message late = message().build();
            committed(late);
            assertTakenInOrder(
                    List.of(past.id(), early.id(), late.id()),
                    "availability: '"
                            + past.id()
                            + "' was enqueued after '"
                            + early.id()
                            + "' with notBefore "
                            + anHourAgo
                            + ", an hour in the past, so it has been available since then and comes"
                            + " first; a store that moves a past notBefore to its enqueue time, or"
                            + " to the claim's now, puts it behind '"
                            + early.id()
                            + "'");
        }

        @Test
        @DisplayName(
                "messages that become available together are claimed in enqueue order, not in id or occurredAt order")
        void required_claimOrderIsEnqueueOrderNotIdOrOccurredAtOrder() {
            List<Message> zam = disagreeing(null);
            committed(zam);
            String why =
                    "enqueued together in the order z, a, m: the tie-break is enqueue order, not id"
                            + " order (a, m, z) nor occurredAt order (a, z, m)";
            claimExactly(store(), OWNER_A, 2, zam.subList(0, 2), why);
            claimExactly(store(), OWNER_A, 2, zam.subList(2, 3), why);
        }

        /** Claims one at a time and checks each claim took the oldest of what was left. */
        private void assertTakenInOrder(List<String> order, String why) {
            List<String> remaining = new ArrayList<>(order);
            List<String> taken = new ArrayList<>();
            while (!remaining.isEmpty()) {
                List<Delivery> got = claim(store(), OWNER_A, 1);
                assertThat(got)
                        .as(
                                "claim(limit=1) must lease something while %s are available%s",
                                remaining, skewHint(got))
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

        /**
         * Claims {@code m} as A, lets the lease end, claims it again as A; returns {the old
         * delivery, the new one}.
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
            Set<String> stale =
                    store().complete(new Completion(OWNER_A, List.of(leases[0].receipt())));
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
            assertThat(
                            store().release(
                                            new Release(
                                                    OWNER_A,
                                                    leases[0].receipt(),
                                                    now(),
                                                    "tck: stale")))
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
                                                    OWNER_A,
                                                    leases[0].receipt(),
                                                    "tck: stale",
                                                    now())))
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
            Set<String> stale =
                    store().abandon(new Abandonment(OWNER_A, List.of(leases[0].receipt())));
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
            assertThat(got)
                    .as("claim must lease all 5 available messages%s", skewHint(got))
                    .hasSize(5);
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
            assertThat(got)
                    .as("claim must lease all 3 available messages%s", skewHint(got))
                    .hasSize(3);
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
    // Per-key order
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Per-key order")
    class PerKeyOrder extends Rules {
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
            String key = nextKey();
            Message first = keyed(key);
            Message second = keyed(key);
            committed(first, second);
            Instant claimedAt = now();
            claimTheFirst(store(), OWNER_A, first);
            String why = heldBack(second, first, "is leased by " + OWNER_A);
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
                    first,
                    List.of(second),
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
            String key = nextKey();
            Message first = keyed(key);
            Message second = keyed(key);
            committed(first, second);
            List<Delivery> got =
                    claimHeadFirst(
                            store(), OWNER_A, first, List.of(second), "it is the first of its key");
            Instant retryAt = now().plus(Duration.ofMinutes(10));
            assertThat(store().release(new Release(OWNER_A, got.get(0).receipt(), retryAt, "tck")))
                    .as("release by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
            if (got.size() > 1) {
                // the relay held the later message back and hands it back "not started"
                assertThat(
                                store().release(
                                                new Release(
                                                        OWNER_A,
                                                        got.get(1).receipt(),
                                                        now(),
                                                        "tck: not started")))
                        .as("release by %s with its live receipt must return true", OWNER_A)
                        .isTrue();
            }
            String why = heldBack(second, first, "waits for its retry at " + retryAt);
            assertNothingClaimable(secondStore(), OWNER_B, why);
            advanceTo(retryAt.minusMillis(1));
            assertNothingClaimable(store(), OWNER_B, why + ", 1 ms later");
            advanceTo(retryAt);
            claimHeadFirst(
                    secondStore(),
                    OWNER_B,
                    first,
                    List.of(second),
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
        @DisplayName(
                "a later message of a key is not claimable while an earlier one is dead-lettered")
        void required_deadLetterBlocksLaterMessagesOfItsKey() {
            String key = nextKey();
            Message first = keyed(key);
            Message second = keyed(key);
            committed(first, second);
            Delivery d = claimTheFirst(store(), OWNER_A, first);
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER_A, d.receipt(), "tck: poison", now())))
                    .as("deadLetter by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
            String why =
                    heldBack(second, first, "is dead-lettered")
                            + "; by default a dead letter blocks its key until it is replayed or"
                            + " discarded (store() must be built with the defaults)";
            assertNothingClaimable(store(), OWNER_B, why);
            advance(Duration.ofDays(1));
            assertNothingClaimable(secondStore(), OWNER_B, why + ", even a day later");
        }

        /** Enqueues two messages of a key and dead-letters the first; returns them. */
        private List<Message> deadHeadAndFollower() {
            String key = nextKey();
            Message first = keyed(key);
            Message second = keyed(key);
            committed(first, second);
            Delivery d = claimTheFirst(store(), OWNER_A, first);
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER_A, d.receipt(), "tck: poison", now())))
                    .as("deadLetter by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
            assertNothingClaimable(store(), OWNER_B, heldBack(second, first, "is dead-lettered"));
            return List.of(first, second);
        }

        @Test
        @DisplayName(
                "a dead letter blocks its key until it is replayed; then it is claimed first, on attempt 1")
        void optional_deadLetterBlocksItsKeyUntilReplayed() {
            OutboxAdmin admin = requireAdmin("replay a dead letter");
            List<Message> m = deadHeadAndFollower();
            int replayed = admin.replay(List.of(m.get(0).id()), now());
            assertThat(replayed)
                    .as(
                            "admin().replay of the dead letter '%s' must replay 1, but your store"
                                    + " replayed %d",
                            m.get(0).id(), replayed)
                    .isEqualTo(1);
            List<Delivery> got =
                    claimHeadFirst(
                            secondStore(),
                            OWNER_B,
                            m.get(0),
                            List.of(m.get(1)),
                            "it was replayed, and it is still the first of its key");
            assertThat(got.get(0).attempt())
                    .as(
                            "a replayed message starts again at attempt 1, but your store reported %d",
                            got.get(0).attempt())
                    .isEqualTo(1);
            if (got.size() == 1) {
                assertCompletes(secondStore(), OWNER_B, got.get(0), "the lease is live");
                claimOne(store(), OWNER_C, m.get(1));
            }
        }

        @Test
        @DisplayName("a dead letter blocks its key until it is discarded")
        void optional_deadLetterBlocksItsKeyUntilDiscarded() {
            OutboxAdmin admin = requireAdmin("discard a dead letter");
            List<Message> m = deadHeadAndFollower();
            int discarded = admin.discard(List.of(m.get(0).id()));
            assertThat(discarded)
                    .as(
                            "admin().discard of the dead letter '%s' must discard 1, but your store"
                                    + " discarded %d",
                            m.get(0).id(), discarded)
                    .isEqualTo(1);
            claimOne(secondStore(), OWNER_B, m.get(1));
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
            String key = nextKey();
            Message first = keyed(key);
            Message second = keyed(key);
            committed(first, second);
            Delivery d = claimTheFirst(lenient, OWNER_A, first);
            assertNothingClaimable(
                    lenient, OWNER_B, heldBack(second, first, "is leased (whatever the option)"));
            assertThat(
                            lenient.deadLetter(
                                    new DeadLetter(OWNER_A, d.receipt(), "tck: poison", now())))
                    .as("deadLetter by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
            List<Delivery> got = claimAll(lenient, OWNER_B);
            assertThat(ids(got))
                    .as(
                            "storeWhereDeadLettersDoNotBlock() is built so that a dead letter no longer"
                                    + " counts as an earlier message of its key: after '%s' was"
                                    + " dead-lettered, '%s' must be claimable, but your store returned %s",
                            first.id(), second.id(), deliveries(got))
                    .containsExactly(second.id());
        }

        @Test
        @DisplayName("a later message of a key becomes claimable once the earlier one completes")
        void required_laterMessageBecomesClaimableWhenTheEarlierOneCompletes() {
            String key = nextKey();
            Message first = keyed(key);
            Message second = keyed(key);
            committed(first, second);
            Delivery d = claimTheFirst(store(), OWNER_A, first);
            assertCompletes(store(), OWNER_A, d, "the lease is live");
            Delivery next = claimOne(secondStore(), OWNER_B, second);
            assertThat(next.attempt())
                    .as(
                            "'%s' was held back, never claimed: its first claim is attempt 1, but your"
                                    + " store reported %d",
                            second.id(), next.attempt())
                    .isEqualTo(1);
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
            String key = nextKey();
            Message first = keyed(key);
            Message second = keyed(key);
            committed(first, second);
            claimTheFirst(store(), OWNER_A, first);
            Message unkeyed = message().build();
            Message otherKey = keyed(nextKey());
            committed(unkeyed, otherKey);
            List<Delivery> got = claimAll(secondStore(), OWNER_B);
            assertThat(ids(got))
                    .as(
                            "while '%s' is leased, only its own key is blocked: '%s' (no key) and '%s'"
                                    + " (another key) must be claimable and '%s' not, but your store"
                                    + " returned %s%s",
                            first.id(),
                            unkeyed.id(),
                            otherKey.id(),
                            second.id(),
                            deliveries(got),
                            skewHint(got))
                    .containsExactlyInAnyOrder(unkeyed.id(), otherKey.id());
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Abandon and attempts
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Abandon and attempts")
    class AbandonRules extends Rules {
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
            committed(m);
            Delivery first = claimOne(store(), OWNER_A, m);
            assertAbandons(store(), OWNER_A, first);
            Delivery again = claimOne(secondStore(), OWNER_B, m);
            assertThat(again.attempt())
                    .as(
                            "'%s' was claimed (attempt 1) and abandoned, never handed to a publisher:"
                                    + " abandon takes the attempt back, so the next claim is attempt 1"
                                    + " again, but your store reported %d",
                            m.id(), again.attempt())
                    .isEqualTo(1);
            assertThat(secondStore().release(new Release(OWNER_B, again.receipt(), now(), "tck")))
                    .as("release by %s with its live receipt must return true", OWNER_B)
                    .isTrue();
            Delivery afterRelease = claimOne(store(), OWNER_C, m);
            assertThat(afterRelease.attempt())
                    .as(
                            "a release counts the attempt (a real try failed), so the claim after it is"
                                    + " attempt 2, but your store reported %d",
                            afterRelease.attempt())
                    .isEqualTo(2);
            assertAbandons(store(), OWNER_C, afterRelease);
            Delivery last = claimOne(store(), OWNER_A, m);
            assertThat(last.attempt())
                    .as(
                            "after one real try and an abandoned claim, the next claim is attempt 2 again,"
                                    + " but your store reported %d",
                            last.attempt())
                    .isEqualTo(2);
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
            String key = nextKey();
            Message head = keyed(key);
            Message follower = keyed(key);
            committed(head, follower);
            List<Delivery> got = claimAll(store(), OWNER_A);
            assertThat(ids(got))
                    .as(
                            "a claim of everything must lease '%s' and then '%s' (both of one key, in"
                                    + " enqueue order), but your store returned %s%s",
                            head.id(), follower.id(), deliveries(got), skewHint(got))
                    .containsExactly(head.id(), follower.id());
            Instant retryAt = now().plus(Duration.ofMinutes(10));
            assertThat(store().release(new Release(OWNER_A, got.get(0).receipt(), retryAt, "tck")))
                    .as("release by %s with its live receipt must return true", OWNER_A)
                    .isTrue();
            assertAbandons(store(), OWNER_A, got.get(1));
            assertNothingClaimable(
                    secondStore(),
                    OWNER_B,
                    "'"
                            + follower.id()
                            + "' was abandoned, but '"
                            + head.id()
                            + "' of its key waits for its retry at "
                            + retryAt
                            + ", so the abandoned follower must wait too");
            advanceTo(retryAt);
            List<Delivery> retry =
                    claimHeadFirst(
                            secondStore(),
                            OWNER_B,
                            head,
                            List.of(follower),
                            "its retry is due and it is the first of its key");
            assertThat(retry.get(0).attempt())
                    .as(
                            "the retry of '%s' (one real try failed) must be attempt 2, but your store"
                                    + " reported %d",
                            head.id(), retry.get(0).attempt())
                    .isEqualTo(2);
            Delivery f;
            if (retry.size() > 1) {
                f = retry.get(1);
            } else {
                assertCompletes(secondStore(), OWNER_B, retry.get(0), "the lease is live");
                f = claimOne(store(), OWNER_C, follower);
            }
            assertThat(f.attempt())
                    .as(
                            "'%s' was claimed once and abandoned, so its next claim is attempt 1, but your"
                                    + " store reported %d",
                            follower.id(), f.attempt())
                    .isEqualTo(1);
        }

        @Test
        @DisplayName(
                "abandon by a foreign owner, with an unknown receipt, or with a receipt whose lease was claimed again, changes nothing")
        void required_abandonWithAStaleOrForeignReceiptChangesNothing() {
            Message m = message().build();
            committed(m);
            Instant claimedAt = now();
            Delivery d = claimOne(store(), OWNER_A, m);
            Set<String> foreign = store().abandon(new Abandonment(OWNER_B, List.of(d.receipt())));
            assertThat(foreign)
                    .as(
                            "abandon by %s of a receipt that %s holds must report it stale (a"
                                    + " compare-and-set on owner and receipt), but your store reported %s",
                            OWNER_B, OWNER_A, foreign)
                    .containsExactly(d.receipt());
            Set<String> unknown =
                    store().abandon(new Abandonment(OWNER_A, List.of(UNKNOWN_RECEIPT)));
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
            committed(m);
            Delivery d = claimOne(store(), OWNER_A, m);
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
            assertThat(again.attempt())
                    .as(
                            "'%s' was claimed once and abandoned (the stale writes after that changed"
                                    + " nothing), so its next claim is attempt 1, but your store reported %d",
                            m.id(), again.attempt())
                    .isEqualTo(1);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Extend
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Extend")
    class ExtendRules extends Rules {
        @Test
        @DisplayName(
                "an extended lease hides its message until the new end, and only the leases named are extended")
        void required_extendedLeaseHidesTheMessageUntilTheNewEnd() {
            Message extended = message().build();
            Message notExtended = message().build();
            committed(extended, notExtended);
            Instant claimedAt = now();
            List<Delivery> got = claimAll(store(), OWNER_A);
            assertThat(ids(got))
                    .as("a claim must lease both available messages%s", skewHint(got))
                    .containsExactlyInAnyOrder(extended.id(), notExtended.id());
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
            assertThat(after.attempt())
                    .as(
                            "after the extended lease ended, the next claim must be attempt 2, but your"
                                    + " store reported %d",
                            after.attempt())
                    .isEqualTo(2);
        }

        @Test
        @DisplayName("an extended lease keeps its receipt: the owner can still complete it")
        void required_extendKeepsTheReceiptLive() {
            Message m = message().build();
            committed(m);
            Instant claimedAt = now();
            Delivery d = claimOne(store(), OWNER_A, m);
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
            committed(m);
            Instant claimedAt = now();
            Delivery d = claimOne(store(), OWNER_A, m);
            Instant tomorrow = claimedAt.plus(Duration.ofDays(1));
            Set<String> foreign =
                    store().extend(
                                    new Extension(
                                            OWNER_B,
                                            List.of(d.receipt(), UNKNOWN_RECEIPT),
                                            tomorrow));
            assertThat(foreign)
                    .as(
                            "extend by %s of a receipt that %s holds, and of a receipt your store never"
                                    + " issued, must report both stale, but your store reported %s",
                            OWNER_B, OWNER_A, foreign)
                    .containsExactlyInAnyOrder(d.receipt(), UNKNOWN_RECEIPT);
            advanceTo(claimedAt.plus(LEASE));
            Delivery b = claimOne(secondStore(), OWNER_B, m);
            Instant reclaimedAt = now();
            Set<String> old =
                    store().extend(new Extension(OWNER_A, List.of(d.receipt()), tomorrow));
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
            Set<String> bStale =
                    secondStore().complete(new Completion(OWNER_B, List.of(b.receipt())));
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
            committed(released, dead);
            List<Delivery> got = claimAll(store(), OWNER_A);
            assertThat(ids(got))
                    .as("a claim must lease both available messages%s", skewHint(got))
                    .containsExactlyInAnyOrder(released.id(), dead.id());
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
                    store().extend(
                                    new Extension(
                                            OWNER_A, List.of(r.receipt(), x.receipt()), tomorrow));
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
            assertThat(ids(got))
                    .as("a claim must lease both available messages%s", skewHint(got))
                    .containsExactlyInAnyOrder(keyed.id(), unkeyed.id());
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
                                    + "claimers, but your store never handed out %d of them (first: %s)%s",
                            all.size(),
                            all.size() - holder.size(),
                            lost,
                            skewHint(holder.isEmpty()))
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
                                    + "never handed out again or lost (first: %s)%s",
                            all.size(),
                            all.size() - completed.size(),
                            lost,
                            skewHint(completed.isEmpty()))
                    .hasSize(all.size());
        }

        @Test
        @DisplayName(
                "claimers racing on two store instances hand out each key's messages in enqueue order, to one holder at a time")
        void required_concurrentClaimersKeepPerKeyOrder() throws Exception {
            int count = Math.max(200, concurrencyMessageCount() / 4);
            int keys = 20;
            Map<String, List<String>> order = new HashMap<>();
            List<Message> all = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                String key = idPrefix + "race-" + (i % keys);
                Message m = message().key(key).payload("keyed " + i).build();
                all.add(m);
                order.computeIfAbsent(key, k -> new ArrayList<>()).add(m.id());
            }
            for (int from = 0; from < count; from += 100) {
                enqueueCommitted(all.subList(from, Math.min(count, from + 100)));
            }
            syncWithWallClock();
            Instant at = now();
            Object lock = new Object();
            Map<String, Integer> next = new HashMap<>();
            Map<String, String> holder = new HashMap<>();
            Set<String> releasedOnce = ConcurrentHashMap.newKeySet();
            AtomicInteger finished = new AtomicInteger();
            AtomicInteger inFlight = new AtomicInteger();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            race(
                    (on, owner) -> {
                        while (violations.size() < MAX_VIOLATIONS && finished.get() < count) {
                            if (System.nanoTime() > deadline) {
                                violation(
                                        owner
                                                + " gave up after 60 s with "
                                                + finished.get()
                                                + " of "
                                                + count
                                                + " messages completed (a key stayed blocked)");
                                return;
                            }
                            boolean idle = inFlight.get() == 0;
                            List<Delivery> got =
                                    on.claim(new ClaimRequest(owner, at, Duration.ofHours(1), 7));
                            if (got.isEmpty()) {
                                if (idle) {
                                    return; // nothing leased and nothing claimable: no more work
                                }
                                Thread.yield();
                                continue;
                            }
                            inFlight.addAndGet(got.size());
                            Map<String, List<Delivery>> byKey = new LinkedHashMap<>();
                            for (Delivery d : got) {
                                byKey.computeIfAbsent(
                                                d.message().key().orElse("(none)"),
                                                k -> new ArrayList<>())
                                        .add(d);
                            }
                            synchronized (lock) {
                                for (Map.Entry<String, List<Delivery>> e : byKey.entrySet()) {
                                    String key = e.getKey();
                                    List<String> ids = ids(e.getValue());
                                    String previous = holder.put(key, owner);
                                    if (previous != null) {
                                        violation(
                                                owner
                                                        + " was handed "
                                                        + ids
                                                        + " of key "
                                                        + key
                                                        + " while "
                                                        + previous
                                                        + " held an earlier message of that key");
                                    }
                                    List<String> keyOrder = order.getOrDefault(key, List.of());
                                    int from = Math.min(next.getOrDefault(key, 0), keyOrder.size());
                                    List<String> expected =
                                            keyOrder.subList(
                                                    from,
                                                    Math.min(keyOrder.size(), from + ids.size()));
                                    if (!expected.equals(ids)) {
                                        violation(
                                                owner
                                                        + " was handed "
                                                        + ids
                                                        + " of key "
                                                        + key
                                                        + ", but the next of that key in enqueue"
                                                        + " order were "
                                                        + expected);
                                    }
                                }
                            }
                            List<String> toComplete = new ArrayList<>();
                            List<Release> toRelease = new ArrayList<>();
                            List<String> toAbandon = new ArrayList<>();
                            // bookkeeping before the store writes: another claimer can get the key
                            // only after them
                            synchronized (lock) {
                                for (Map.Entry<String, List<Delivery>> e : byKey.entrySet()) {
                                    List<Delivery> ofKey = e.getValue();
                                    String headId = ofKey.get(0).message().id();
                                    holder.remove(e.getKey());
                                    if (Math.floorMod(headId.hashCode(), 3) == 0
                                            && releasedOnce.add(headId)) {
                                        toRelease.add(
                                                new Release(
                                                        owner,
                                                        ofKey.get(0).receipt(),
                                                        at,
                                                        "tck: simulated failure"));
                                        for (Delivery d : ofKey.subList(1, ofKey.size())) {
                                            toAbandon.add(d.receipt());
                                        }
                                    } else {
                                        ofKey.forEach(d -> toComplete.add(d.receipt()));
                                        next.merge(e.getKey(), ofKey.size(), Integer::sum);
                                        finished.addAndGet(ofKey.size());
                                    }
                                }
                            }
                            for (Release r : toRelease) {
                                if (!on.release(r)) {
                                    violation("release by " + owner + " of a live lease was stale");
                                }
                            }
                            if (!toAbandon.isEmpty()
                                    && !on.abandon(new Abandonment(owner, toAbandon)).isEmpty()) {
                                violation("abandon by " + owner + " of live leases was stale");
                            }
                            if (!toComplete.isEmpty()
                                    && !on.complete(new Completion(owner, toComplete)).isEmpty()) {
                                violation("complete by " + owner + " of live leases was stale");
                            }
                            inFlight.addAndGet(-got.size());
                        }
                    });
            assertThat(violations)
                    .as(
                            "%d claimers raced over %d messages of %d keys (releasing a third of the"
                                    + " heads once and abandoning what they held behind them); a key's"
                                    + " messages must be handed out in enqueue order and never to two"
                                    + " holders at once, but your store broke that: %s",
                            CLAIMERS, count, keys, violations)
                    .isEmpty();
            assertThat(finished.get())
                    .as(
                            "every one of the %d keyed messages must be completed, but %d were: the"
                                    + " claimers stopped when nothing was leased and nothing more was"
                                    + " claimable%s",
                            count, finished.get(), skewHint(finished.get() == 0))
                    .isEqualTo(count);
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
