package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The admin contract kit: one JUnit 5 test per rule of the {@link OutboxAdmin} port (statistics,
 * dead letters page by page, replay, discard, last error), run against a store's admin side and its
 * dispatch side over the same storage.
 *
 * <p>A store implementer extends this class in their test sources and supplies the factories: the
 * store under test ({@link #store()}, built with the store's defaults, so dead letters block their
 * key), its admin port ({@link #admin()}; by default {@code store()} itself when it implements
 * {@link OutboxAdmin}), a way to enqueue messages in a committed transaction and a way to empty the
 * storage. Like {@link OutboxStoreContract}, every rule is a package-private test method named
 * {@code required_<rule>}, grouped by concern in {@link Nested} classes, and a failure says what
 * the store did wrong. No knob skips a rule.
 *
 * <p>Time: every instant the kit passes ({@link ClaimRequest#now()}, {@link
 * OutboxAdmin#statistics(Instant)}, {@link DeadLetter#at()}, the {@code now} of a replay) is the
 * kit's own clock, which starts at the wall clock plus {@link #clockSkewTolerance()} after each
 * enqueue and only moves forward; no rule sleeps.
 *
 * <p>Lifecycle: before each rule the kit calls {@link #resetStore()}; the subclass's own
 * {@code @BeforeEach} and {@code @BeforeAll} methods run first.
 */
public abstract class OutboxAdminContract {
    static final Duration LEASE = Duration.ofMinutes(5);
    static final String OWNER = "tck-admin-owner";
    static final String OTHER = "tck-admin-other";
    static final String TOPIC_A = "tck.admin.a";
    static final String TOPIC_B = "tck.admin.b";
    static final String UNKNOWN_ID = "tck-id-that-was-never-enqueued";
    private static final String ID_LETTERS = "qbxfmazkdt";

    private Instant time;
    private Instant wallAtStart;
    private String idPrefix;
    private int idCounter;
    private int keyCounter;

    /** Creates the kit; subclasses supply the factories. */
    protected OutboxAdminContract() {}

    /**
     * Returns the store under test, built with the store's defaults. Called after {@link
     * #resetStore()} before each rule; may return the same instance every time.
     *
     * @return the store whose admin port is tested
     */
    protected abstract OutboxStore store();

    /**
     * Returns the admin port over the same storage as {@link #store()}. The default returns {@code
     * store()} when it implements {@link OutboxAdmin}.
     *
     * @return the admin port under test
     */
    protected OutboxAdmin admin() {
        if (store() instanceof OutboxAdmin a) {
            return a;
        }
        throw new IllegalStateException(
                "store() is no OutboxAdmin: override admin() to return the admin port of the store");
    }

    /** Removes every message (pending, leased and dead) from the storage. */
    protected abstract void resetStore();

    /**
     * Enqueues the messages through the store's write side in one transaction that commits.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    /**
     * How far the store's enqueue clock may differ from this JVM's clock; see {@link
     * OutboxStoreContract#clockSkewTolerance()}. The default is one second.
     *
     * @return a zero or positive tolerance
     */
    protected Duration clockSkewTolerance() {
        return Duration.ofSeconds(1);
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

    private void syncWithWallClock() {
        Duration tolerance = clockSkewTolerance();
        if (tolerance == null || tolerance.isNegative()) {
            throw new IllegalStateException(
                    "clockSkewTolerance() must be zero or positive, but was " + tolerance);
        }
        Instant wall = Instant.now().plus(tolerance).truncatedTo(ChronoUnit.MILLIS).plusMillis(1);
        if (wall.isAfter(time)) {
            time = wall;
        }
    }

    private Instant now() {
        return time;
    }

    private void advanceTo(Instant to) {
        if (to.isBefore(time)) {
            throw new IllegalStateException("kit clock would move back from " + time + " to " + to);
        }
        time = to;
    }

    private Message.Builder message(String topic) {
        idCounter++;
        String id = idPrefix + ID_LETTERS.charAt(idCounter % ID_LETTERS.length()) + idCounter;
        long zigzag = idCounter % 2 == 0 ? -idCounter : idCounter;
        return Message.builder()
                .id(id)
                .topic(topic)
                .module("tck")
                .contentType("application/json")
                .header("tenant", "t-" + idCounter)
                .occurredAt(
                        wallAtStart
                                .truncatedTo(ChronoUnit.SECONDS)
                                .minus(Duration.ofHours(1))
                                .plusSeconds(zigzag))
                .payload("{\"n\":" + idCounter + "}");
    }

    private Message message() {
        return message(TOPIC_A).build();
    }

    private Message keyed(String key) {
        return message(TOPIC_A).key(key).build();
    }

    private String nextKey() {
        return idPrefix + "key-" + (++keyCounter);
    }

    private void committed(Message... messages) {
        enqueueCommitted(List.of(messages));
        syncWithWallClock();
    }

    private List<Delivery> claimAll(String owner) {
        return store().claim(new ClaimRequest(owner, time, LEASE, ClaimRequest.MAX_LIMIT));
    }

    /** Claims everything and returns the deliveries by message id, checking all are there. */
    private Map<String, Delivery> claimEach(Message... expected) {
        List<Delivery> got = claimAll(OWNER);
        Map<String, Delivery> byId = new LinkedHashMap<>();
        got.forEach(d -> byId.put(d.message().id(), d));
        List<String> wanted = Arrays.stream(expected).map(Message::id).toList();
        assertThat(byId.keySet())
                .as(
                        "setting up: a claim at %s must lease %s, but your store returned %s%s",
                        time,
                        wanted,
                        deliveries(got),
                        got.isEmpty()
                                ? " (if your store's enqueue clock runs more than"
                                        + " clockSkewTolerance() = "
                                        + clockSkewTolerance()
                                        + " ahead of this JVM's, raise it)"
                                : "")
                .containsAll(wanted);
        return byId;
    }

    /** Claims the messages and dead-letters each at the given instant with a reason naming it. */
    private void deadLetter(Map<Message, Instant> deadAt) {
        Map<String, Delivery> leases = claimEach(deadAt.keySet().toArray(new Message[0]));
        deadAt.forEach(
                (m, at) ->
                        assertThat(
                                        store().deadLetter(
                                                        new DeadLetter(
                                                                OWNER,
                                                                leases.get(m.id()).receipt(),
                                                                reasonOf(m),
                                                                at)))
                                .as("setting up: deadLetter of '%s' with its live receipt", m.id())
                                .isTrue());
    }

    private void deadLetterNow(Message... messages) {
        Map<Message, Instant> at = new LinkedHashMap<>();
        for (Message m : messages) {
            at.put(m, now());
        }
        deadLetter(at);
    }

    private static String reasonOf(Message m) {
        return "tck: given up on " + m.id() + " — «permanent» ✓";
    }

    /** Every dead letter, page by page with the given query, checked to end. */
    private List<DeadMessage> listAll(DeadLetterQuery query) {
        List<DeadMessage> all = new ArrayList<>();
        DeadLetterQuery q = query;
        for (int pages = 0; pages < 1000; pages++) {
            DeadLetterPage page = admin().deadLetters(q);
            all.addAll(page.items());
            if (page.next().isEmpty()) {
                return all;
            }
            q = query.after(page.next().get());
        }
        throw new AssertionError(
                "deadLetters(" + query + ") kept returning a next cursor for 1000 pages");
    }

    private static List<String> idsOfDead(List<DeadMessage> dead) {
        return dead.stream().map(d -> d.message().id()).collect(Collectors.toList());
    }

    private static List<String> idsOf(Message... messages) {
        return Arrays.stream(messages).map(Message::id).toList();
    }

    private static void assertCounts(
            OutboxStatistics stats,
            TopicStatistics actual,
            String of,
            long ready,
            long delayed,
            long leased,
            long dead,
            String setup) {
        assertThat(List.of(actual.ready(), actual.delayed(), actual.leased(), actual.dead()))
                .as(
                        "statistics(%s) of %s must count ready=%d, delayed=%d, leased=%d, dead=%d (%s),"
                                + " but your store counted ready=%d, delayed=%d, leased=%d, dead=%d",
                        stats.at(),
                        of,
                        ready,
                        delayed,
                        leased,
                        dead,
                        setup,
                        actual.ready(),
                        actual.delayed(),
                        actual.leased(),
                        actual.dead())
                .containsExactly(ready, delayed, leased, dead);
    }

    private TopicStatistics topic(OutboxStatistics stats, String topic) {
        TopicStatistics t = stats.byTopic().get(topic);
        assertThat(t)
                .as(
                        "statistics must count topic '%s', which has messages, but your store listed"
                                + " only %s",
                        topic, stats.byTopic().keySet())
                .isNotNull();
        return t;
    }

    /** Base of every rule group: empties the storage and starts the kit's clock. */
    abstract class Rules {
        @BeforeEach
        void resetStoreAndClock() {
            prepare();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Statistics
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Statistics")
    class Statistics extends Rules {
        @Test
        @DisplayName(
                "statistics count ready, delayed, leased and dead messages per topic and in total")
        void required_statisticsCountEachStatePerTopicAndInTotal() {
            Message leased = message();
            Message waiting = message();
            Message deadA = message();
            Message completed = message();
            Message deadB = message(TOPIC_B).build();
            committed(leased, waiting, deadA, completed, deadB);
            Map<String, Delivery> d = claimEach(leased, waiting, deadA, completed, deadB);
            Instant later = now().plus(Duration.ofMinutes(10));
            store().release(new Release(OWNER, d.get(waiting.id()).receipt(), later, "tck"));
            store().deadLetter(new DeadLetter(OWNER, d.get(deadA.id()).receipt(), "tck", now()));
            store().deadLetter(new DeadLetter(OWNER, d.get(deadB.id()).receipt(), "tck", now()));
            store().complete(new Completion(OWNER, List.of(d.get(completed.id()).receipt())));
            Message ready1 = message();
            Message ready2 = message();
            Message delayed = message(TOPIC_A).notBefore(later).build();
            Message readyB = message(TOPIC_B).build();
            committed(ready1, ready2, delayed, readyB);
            Instant at = now();
            OutboxStatistics stats = admin().statistics(at);
            assertThat(stats.at())
                    .as("statistics(%s) must say when the states were judged", at)
                    .isEqualTo(at);
            assertThat(stats.byTopic().keySet())
                    .as(
                            "statistics must list exactly the topics that have messages, but your store"
                                    + " listed %s",
                            stats.byTopic().keySet())
                    .containsExactlyInAnyOrder(TOPIC_A, TOPIC_B);
            String setupA =
                    "2 enqueued and due, 1 released until later and 1 with a later notBefore, 1 claimed,"
                            + " 1 dead-lettered, 1 completed";
            assertCounts(stats, topic(stats, TOPIC_A), "topic " + TOPIC_A, 2, 2, 1, 1, setupA);
            assertCounts(
                    stats,
                    topic(stats, TOPIC_B),
                    "topic " + TOPIC_B,
                    1,
                    0,
                    0,
                    1,
                    "1 due, 1 dead-lettered");
            assertCounts(stats, stats.total(), "all topics", 3, 2, 1, 2, "the sum of both topics");
        }

        @Test
        @DisplayName(
                "statistics judge each state at the instant they are asked for: ended leases and due retries are ready")
        void required_statisticsJudgeStatesAtTheGivenInstant() {
            Message leased = message();
            Message retried = message();
            committed(leased, retried);
            Instant start = now();
            Map<String, Delivery> d = claimEach(leased, retried);
            Instant retryAt = start.plus(Duration.ofMinutes(10));
            store().release(new Release(OWNER, d.get(retried.id()).receipt(), retryAt, "tck"));
            Message delayed = message(TOPIC_A).notBefore(retryAt).build();
            committed(delayed);
            Instant beforeLeaseEnd = start.plus(LEASE).minusMillis(1);
            advanceTo(beforeLeaseEnd);
            OutboxStatistics early = admin().statistics(beforeLeaseEnd);
            assertCounts(
                    early,
                    early.total(),
                    "all topics",
                    0,
                    2,
                    1,
                    0,
                    "1 m before the lease ends and 10 minutes before the retry and notBefore");
            OutboxStatistics late = admin().statistics(retryAt);
            assertCounts(
                    late,
                    late.total(),
                    "all topics",
                    3,
                    0,
                    0,
                    0,
                    "the lease ended (nobody renewed it) and the retry and notBefore are due: all"
                            + " three are ready");
        }

        /** A head and its follower of a new key, committed, and the lease of the head alone. */
        private record HeadAndFollower(Message head, Message follower, Delivery lease) {}

        private HeadAndFollower leaseTheHeadOfANewKey() {
            String key = nextKey();
            Message head = keyed(key);
            Message follower = keyed(key);
            committed(head, follower);
            List<Delivery> got =
                    store().claim(new ClaimRequest(OWNER, now(), LEASE, 1)); // only the head
            assertThat(ids(got))
                    .as("setting up: claim(limit=1) must lease the head of the key '%s'", key)
                    .containsExactly(head.id());
            return new HeadAndFollower(head, follower, got.get(0));
        }

        @Test
        @DisplayName(
                "a due message waiting behind an earlier message of its key counts as ready, not delayed")
        void required_statisticsCountWaitingFollowersAsReady() {
            leaseTheHeadOfANewKey();
            OutboxStatistics stats = admin().statistics(now());
            assertCounts(
                    stats,
                    stats.total(),
                    "all topics",
                    1,
                    0,
                    1,
                    0,
                    "the head of a key leased, its follower due but held back");
        }

        @Test
        @DisplayName(
                "a due follower counts as ready whether or not a claim has passed it over, behind a leased or a retrying head")
        void required_statisticsCountAFollowerAsReadyBeforeAndAfterAClaimPassesIt() {
            HeadAndFollower k = leaseTheHeadOfANewKey();
            Message head = k.head();
            Message follower = k.follower();
            List<Delivery> passed = claimAll(OTHER);
            assertThat(ids(passed))
                    .as(
                            "setting up: '%s' waits behind its leased head '%s', so a claim of every"
                                    + " message must return nothing, but your store returned %s",
                            follower.id(), head.id(), deliveries(passed))
                    .isEmpty();
            OutboxStatistics stats = admin().statistics(now());
            assertCounts(
                    stats,
                    stats.total(),
                    "all topics",
                    1,
                    0,
                    1,
                    0,
                    "the head leased; its follower due and waiting, after a claim of every message"
                            + " passed it over (a store that parks such a follower must still count it"
                            + " ready)");
            Instant retryAt = now().plus(Duration.ofMinutes(10));
            assertThat(store().release(new Release(OWNER, k.lease().receipt(), retryAt, "tck")))
                    .as("setting up: release of the head '%s' with its live receipt", head.id())
                    .isTrue();
            List<Delivery> none = claimAll(OTHER);
            assertThat(ids(none))
                    .as(
                            "setting up: the head '%s' waits for its retry at %s and '%s' behind it, so"
                                    + " a claim must return nothing, but your store returned %s",
                            head.id(), retryAt, follower.id(), deliveries(none))
                    .isEmpty();
            stats = admin().statistics(now());
            assertCounts(
                    stats,
                    stats.total(),
                    "all topics",
                    1,
                    1,
                    0,
                    0,
                    "the head waits for its retry (delayed); its follower is due and waits behind it,"
                            + " passed over by a claim (ready)");
        }

        @Test
        @DisplayName("blockedKeys counts the keys whose later messages a dead letter holds back")
        void required_blockedKeysCountsKeysHeldBackByADeadLetter() {
            String one = nextKey();
            String two = nextKey();
            String leasedKey = nextKey();
            Message oneHead = keyed(one);
            Message oneNext = keyed(one);
            Message twoHead = keyed(two);
            Message twoSecond = keyed(two);
            Message twoNext = keyed(two);
            Message leasedHead = keyed(leasedKey);
            Message leasedNext = keyed(leasedKey);
            Message unkeyed = message();
            committed(oneHead, twoHead, twoSecond, leasedHead, unkeyed);
            deadLetterNow(oneHead, twoHead, twoSecond, unkeyed);
            committed(oneNext, twoNext, leasedNext);
            OutboxStatistics stats = admin().statistics(now());
            assertThat(stats.blockedKeys())
                    .as(
                            "two keys have a dead letter followed by a waiting message (one of them two"
                                    + " dead letters); a key whose head is only leased, and a dead letter"
                                    + " without a key, block nothing; so blockedKeys must be 2, but your"
                                    + " store said %d",
                            stats.blockedKeys())
                    .isEqualTo(2);
        }

        @Test
        @DisplayName(
                "oldestReadyAge is how long the oldest ready message has been due, per topic and in total, and zero when none is")
        void required_oldestReadyAgeIsHowLongTheOldestReadyMessageHasBeenDue() {
            Instant dueA = now().plus(Duration.ofMinutes(1));
            Instant dueB = now().plus(Duration.ofMinutes(2));
            Message a = message(TOPIC_A).notBefore(dueA).build();
            Message b = message(TOPIC_B).notBefore(dueB).build();
            committed(a, b);
            OutboxStatistics none = admin().statistics(now());
            assertThat(none.total().oldestReadyAge())
                    .as(
                            "with nothing ready, oldestReadyAge must be zero, but your store said %s",
                            none.total().oldestReadyAge())
                    .isEqualTo(Duration.ZERO);
            Instant at = dueA.plus(Duration.ofMinutes(10));
            advanceTo(at);
            OutboxStatistics stats = admin().statistics(at);
            assertThat(
                            List.of(
                                    stats.total().oldestReadyAge(),
                                    topic(stats, TOPIC_A).oldestReadyAge(),
                                    topic(stats, TOPIC_B).oldestReadyAge()))
                    .as(
                            "at %s, '%s' (topic %s) has been due for 10 min since its notBefore and '%s'"
                                    + " (topic %s) for 9 min: oldestReadyAge must be [total, %s, %s] ="
                                    + " [PT10M, PT10M, PT9M], but your store said %s",
                            at,
                            a.id(),
                            TOPIC_A,
                            b.id(),
                            TOPIC_B,
                            TOPIC_A,
                            TOPIC_B,
                            List.of(
                                    stats.total().oldestReadyAge(),
                                    topic(stats, TOPIC_A).oldestReadyAge(),
                                    topic(stats, TOPIC_B).oldestReadyAge()))
                    .containsExactly(
                            Duration.ofMinutes(10), Duration.ofMinutes(10), Duration.ofMinutes(9));
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Dead letters
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Dead letters")
    class DeadLetters extends Rules {
        @Test
        @DisplayName(
                "dead letters are listed oldest dead-letter time first, with reason, attempts, times and the message as enqueued")
        void required_deadLettersListOldestFirstWithTheirDetails() {
            Instant before = Instant.now();
            Message x = message(TOPIC_A).key(nextKey()).build();
            Message y = message();
            Message z = message(TOPIC_B).build();
            Message alive = message();
            committed(x, y, z, alive);
            Map<String, Delivery> first = claimEach(x, y, z, alive);
            store().release(new Release(OWNER, first.get(y.id()).receipt(), now(), "tck: retry"));
            Instant t = now();
            Map<Message, Instant> deadAt = new LinkedHashMap<>();
            deadAt.put(y, t.plus(Duration.ofMinutes(3)));
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER,
                                                    first.get(x.id()).receipt(),
                                                    reasonOf(x),
                                                    t.plus(Duration.ofMinutes(1)))))
                    .isTrue();
            assertThat(
                            store().deadLetter(
                                            new DeadLetter(
                                                    OWNER,
                                                    first.get(z.id()).receipt(),
                                                    reasonOf(z),
                                                    t.plus(Duration.ofMinutes(2)))))
                    .isTrue();
            deadLetter(deadAt); // y, on its second attempt
            List<DeadMessage> listed = admin().deadLetters(DeadLetterQuery.all()).items();
            assertThat(idsOfDead(listed))
                    .as(
                            "deadLetters must list exactly the dead letters, oldest dead-letter time"
                                    + " first: '%s' (+1 min), '%s' (+2 min), '%s' (+3 min); '%s' is leased"
                                    + " and not listed; but your store listed %s",
                            x.id(), z.id(), y.id(), alive.id(), idsOfDead(listed))
                    .containsExactly(x.id(), z.id(), y.id());
            Map<String, Object[]> expected = new LinkedHashMap<>();
            expected.put(x.id(), new Object[] {x, 1, t.plus(Duration.ofMinutes(1))});
            expected.put(z.id(), new Object[] {z, 1, t.plus(Duration.ofMinutes(2))});
            expected.put(y.id(), new Object[] {y, 2, t.plus(Duration.ofMinutes(3))});
            for (DeadMessage dead : listed) {
                Object[] e = expected.get(dead.message().id());
                Message m = (Message) e[0];
                List<String> diffs = Describe.differences(m, dead.message());
                assertThat(diffs)
                        .as(
                                "the dead letter '%s' must carry the message exactly as enqueued, but"
                                        + " your store changed it: %s",
                                m.id(), String.join("; ", diffs))
                        .isEmpty();
                assertThat(dead.reason())
                        .as("the dead letter '%s' must keep its reason exactly", m.id())
                        .isEqualTo(reasonOf(m));
                assertThat(dead.attempts())
                        .as(
                                "the dead letter '%s' was tried %d time(s), but your store said %d",
                                m.id(), e[1], dead.attempts())
                        .isEqualTo(e[1]);
                assertThat(dead.deadAt())
                        .as(
                                "the dead letter '%s' was given up at %s (DeadLetter.at), but your store"
                                        + " said %s",
                                m.id(), e[2], dead.deadAt())
                        .isEqualTo(e[2]);
                assertThat(dead.enqueuedAt())
                        .as(
                                "the dead letter '%s' was enqueued between %s and %s (give or take"
                                        + " clockSkewTolerance() = %s), but your store said %s",
                                m.id(), before, t, clockSkewTolerance(), dead.enqueuedAt())
                        .isBetween(before.minus(clockSkewTolerance()), t);
            }
        }

        @Test
        @DisplayName(
                "dead letters given up at the same instant are listed in enqueue order, not by id or occurredAt")
        void required_deadLettersOfOneInstantListInEnqueueOrder() {
            Instant base = wallAtStart.truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofHours(2));
            String tag = idPrefix + "same-";
            Message z = message(TOPIC_A).id(tag + "z").occurredAt(base.plusSeconds(2)).build();
            Message a = message(TOPIC_A).id(tag + "a").occurredAt(base.plusSeconds(1)).build();
            Message m = message(TOPIC_A).id(tag + "m").occurredAt(base.plusSeconds(3)).build();
            committed(z, a, m);
            deadLetterNow(m, a, z);
            List<DeadMessage> listed = admin().deadLetters(DeadLetterQuery.all()).items();
            assertThat(idsOfDead(listed))
                    .as(
                            "three dead letters of one instant, enqueued z, a, m, must be listed in"
                                    + " enqueue order (not by id a, m, z nor by occurredAt a, z, m), but your"
                                    + " store listed %s",
                            idsOfDead(listed))
                    .containsExactly(z.id(), a.id(), m.id());
        }

        @Test
        @DisplayName(
                "dead letters are paged: each page holds at most its limit, and the cursor continues where the page ended")
        void required_deadLettersArePagedWithACursor() {
            DeadLetterPage empty = admin().deadLetters(DeadLetterQuery.all().limit(2));
            assertThat(empty.items().isEmpty() && empty.next().isEmpty())
                    .as(
                            "with no dead letters the first page must be empty and the last, but your"
                                    + " store returned %s items and next=%s",
                            empty.items().size(), empty.next())
                    .isTrue();
            Message[] dead = new Message[5];
            Map<Message, Instant> at = new LinkedHashMap<>();
            for (int i = 0; i < dead.length; i++) {
                dead[i] = message();
                at.put(dead[i], now().plus(Duration.ofSeconds(i)));
            }
            committed(dead);
            deadLetter(at);
            DeadLetterQuery query = DeadLetterQuery.all().limit(2);
            List<List<String>> pages = new ArrayList<>();
            DeadLetterPage page = admin().deadLetters(query);
            pages.add(idsOfDead(page.items()));
            while (page.next().isPresent() && pages.size() < 10) {
                page = admin().deadLetters(query.after(page.next().get()));
                pages.add(idsOfDead(page.items()));
            }
            List<Integer> sizes = pages.stream().map(List::size).toList();
            assertThat(sizes)
                    .as(
                            "with limit 2 no page may hold more than 2 dead letters (a store that reads"
                                    + " limit + 1 rows to learn whether a next page exists must not return"
                                    + " the extra one), but your store returned the pages %s",
                            pages)
                    .allMatch(n -> n <= 2);
            List<String> all = pages.stream().flatMap(List::stream).toList();
            assertThat(all)
                    .as(
                            "paging 5 dead letters 2 at a time must list each once, oldest first (%s), but"
                                    + " your store returned the pages %s",
                            idsOf(dead), pages)
                    .containsExactlyElementsOf(idsOf(dead));
            assertThat(sizes.subList(0, Math.min(3, sizes.size())))
                    .as(
                            "with limit 2, the pages must hold 2, 2 and 1 dead letters, but your store"
                                    + " returned %s",
                            pages)
                    .containsExactly(2, 2, 1);
            assertThat(pages)
                    .as(
                            "the page with 1 dead letter (fewer than its limit) is the last: its next"
                                    + " must be empty, but your store returned more pages: %s",
                            pages)
                    .hasSize(3);
        }

        @Test
        @DisplayName(
                "a page boundary between dead letters of one instant skips none and repeats none")
        void required_deadLetterPagesSplitOneInstantWithoutLossOrRepeat() {
            Instant t = now().plus(Duration.ofMinutes(1));
            Message[] dead = new Message[6];
            Map<Message, Instant> at = new LinkedHashMap<>();
            for (int i = 0; i < dead.length; i++) {
                dead[i] = message();
                at.put(
                        dead[i],
                        i == 0 ? t : i == dead.length - 1 ? t.plusSeconds(2) : t.plusSeconds(1));
            }
            committed(dead);
            deadLetter(at);
            DeadLetterQuery query = DeadLetterQuery.all().limit(2);
            List<List<String>> pages = new ArrayList<>();
            DeadLetterPage page = admin().deadLetters(query);
            pages.add(idsOfDead(page.items()));
            while (page.next().isPresent() && pages.size() < 10) {
                page = admin().deadLetters(query.after(page.next().get()));
                pages.add(idsOfDead(page.items()));
            }
            assertThat(pages.stream().flatMap(List::stream).toList())
                    .as(
                            "6 dead letters, the 2nd to 5th dead at the same instant %s, paged 2 at a"
                                    + " time (so two page boundaries fall inside that instant) must be"
                                    + " listed each once, oldest first and within the instant in enqueue"
                                    + " order (%s), but your store returned the pages %s (a cursor that"
                                    + " holds only the dead-letter time skips or repeats the dead letters"
                                    + " of that instant at a page boundary)",
                            t.plusSeconds(1), idsOf(dead), pages)
                    .containsExactlyElementsOf(idsOf(dead));
        }

        @Test
        @DisplayName(
                "dead letters are filtered by topic, by dead-letter time (from inclusive, before exclusive), and pages keep the filter")
        void required_deadLettersAreFilteredByTopicAndTime() {
            Instant t = now().plus(Duration.ofMinutes(1));
            Message a1 = message();
            Message a2 = message();
            Message a3 = message();
            Message b2 = message(TOPIC_B).build();
            committed(a1, a2, a3, b2);
            Map<Message, Instant> at = new LinkedHashMap<>();
            at.put(a1, t);
            at.put(a2, t.plusSeconds(10));
            at.put(a3, t.plusSeconds(20));
            at.put(b2, t.plusSeconds(10));
            deadLetter(at);
            List<String> ofB = idsOfDead(listAll(DeadLetterQuery.all().topic(TOPIC_B)));
            assertThat(ofB)
                    .as(
                            "topic(%s) must list only '%s', but your store listed %s",
                            TOPIC_B, b2.id(), ofB)
                    .containsExactly(b2.id());
            List<String> from =
                    idsOfDead(listAll(DeadLetterQuery.all().deadFrom(t.plusSeconds(10))));
            assertThat(from)
                    .as(
                            "deadFrom(%s) is inclusive and must list '%s', '%s' (same instant, enqueue"
                                    + " order) and '%s', but your store listed %s",
                            t.plusSeconds(10), a2.id(), b2.id(), a3.id(), from)
                    .containsExactly(a2.id(), b2.id(), a3.id());
            List<String> before =
                    idsOfDead(listAll(DeadLetterQuery.all().deadBefore(t.plusSeconds(10))));
            assertThat(before)
                    .as(
                            "deadBefore(%s) is exclusive and must list only '%s', but your store listed %s",
                            t.plusSeconds(10), a1.id(), before)
                    .containsExactly(a1.id());
            DeadLetterQuery both =
                    DeadLetterQuery.all()
                            .topic(TOPIC_A)
                            .deadFrom(t)
                            .deadBefore(t.plusSeconds(20))
                            .limit(1);
            List<String> filtered = idsOfDead(listAll(both));
            assertThat(filtered)
                    .as(
                            "topic(%s), deadFrom(%s), deadBefore(%s), paged one at a time, must list '%s'"
                                    + " then '%s' (every page keeps the filter), but your store listed %s",
                            TOPIC_A, t, t.plusSeconds(20), a1.id(), a2.id(), filtered)
                    .containsExactly(a1.id(), a2.id());
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Replay
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Replay")
    class Replay extends Rules {
        @Test
        @DisplayName(
                "a replayed dead letter is due at the replay's instant, on attempt 1, and no longer listed")
        void required_replayMakesTheDeadLetterDueAgainOnAttemptOne() {
            Message m = message();
            committed(m);
            Map<String, Delivery> first = claimEach(m);
            store().release(new Release(OWNER, first.get(m.id()).receipt(), now(), "tck: retry"));
            deadLetterNow(m);
            Instant replayAt = now().plus(Duration.ofMinutes(1));
            int replayed = admin().replay(List.of(m.id()), replayAt);
            assertThat(replayed)
                    .as(
                            "replay of the dead letter '%s' must report 1, but your store said %d",
                            m.id(), replayed)
                    .isEqualTo(1);
            assertThat(listAll(DeadLetterQuery.all()))
                    .as("a replayed message is no longer a dead letter")
                    .isEmpty();
            assertThat(admin().statistics(now()).total().dead())
                    .as("a replayed message is no longer counted dead")
                    .isZero();
            List<Delivery> early = claimAll(OTHER);
            assertThat(early)
                    .as(
                            "'%s' was replayed to be due at %s, so a claim at %s must not get it yet, but"
                                    + " your store leased %s",
                            m.id(), replayAt, now(), deliveries(early))
                    .isEmpty();
            advanceTo(replayAt);
            List<Delivery> got = claimAll(OTHER);
            assertThat(ids(got))
                    .as(
                            "'%s' was replayed to be due at %s, so a claim then must lease it, but your"
                                    + " store returned %s",
                            m.id(), replayAt, deliveries(got))
                    .containsExactly(m.id());
            assertThat(got.get(0).attempt())
                    .as(
                            "a replay resets the attempts: the next claim of '%s' (tried twice before) is"
                                    + " attempt 1, but your store reported %d",
                            m.id(), got.get(0).attempt())
                    .isEqualTo(1);
        }

        @Test
        @DisplayName(
                "a replayed dead letter unblocks its key: it is claimed first, then the messages behind it")
        void required_replayUnblocksItsKey() {
            String key = nextKey();
            Message head = keyed(key);
            Message next = keyed(key);
            committed(head);
            deadLetterNow(head);
            committed(next);
            assertThat(claimAll(OTHER))
                    .as(
                            "setting up: '%s' must be held back behind the dead letter '%s'",
                            next.id(), head.id())
                    .isEmpty();
            admin().replay(List.of(head.id()), now());
            List<Delivery> got = claimAll(OTHER);
            assertThat(ids(got).isEmpty() ? "" : ids(got).get(0))
                    .as(
                            "after the replay of '%s', the first of its key, a claim must lease it first"
                                    + " (its follower '%s' may come after it), but your store returned %s",
                            head.id(), next.id(), deliveries(got))
                    .isEqualTo(head.id());
            assertThat(got.get(0).attempt())
                    .as(
                            "a replayed message starts again at attempt 1, but your store reported %d",
                            got.get(0).attempt())
                    .isEqualTo(1);
            store().complete(new Completion(OTHER, List.of(got.get(0).receipt())));
            if (got.size() == 1) {
                List<Delivery> after = claimAll(OWNER);
                assertThat(ids(after))
                        .as(
                                "once the replayed '%s' completed, '%s' (behind it in key '%s') must be"
                                        + " claimable, but your store returned %s",
                                head.id(), next.id(), key, deliveries(after))
                        .containsExactly(next.id());
            } else {
                assertThat(ids(got))
                        .as("a claim may lease the follower only after the replayed head")
                        .containsExactly(head.id(), next.id());
            }
        }

        @Test
        @DisplayName("replay ignores unknown ids and messages that are not dead")
        void required_replayIgnoresUnknownAndLiveMessages() {
            Message leased = message();
            Message waiting = message();
            committed(leased, waiting);
            Map<String, Delivery> d = claimEach(leased, waiting);
            Instant retryAt = now().plus(Duration.ofMinutes(10));
            store().release(new Release(OWNER, d.get(waiting.id()).receipt(), retryAt, "tck"));
            Message ready = message();
            committed(ready);
            int replayed =
                    admin().replay(
                                    List.of(UNKNOWN_ID, leased.id(), waiting.id(), ready.id()),
                                    now());
            assertThat(replayed)
                    .as(
                            "replay of an unknown id, a leased, a waiting and a ready message must replay"
                                    + " nothing, but your store said %d",
                            replayed)
                    .isZero();
            List<Delivery> got = claimAll(OTHER);
            assertThat(ids(got))
                    .as(
                            "the replay must have changed nothing: only '%s' is claimable ('%s' is leased,"
                                    + " '%s' waits until %s), but your store returned %s",
                            ready.id(), leased.id(), waiting.id(), retryAt, deliveries(got))
                    .containsExactly(ready.id());
            assertThat(got.get(0).attempt()).as("'%s' was never tried", ready.id()).isEqualTo(1);
            assertThat(
                            store().complete(
                                            new Completion(
                                                    OWNER, List.of(d.get(leased.id()).receipt()))))
                    .as("the lease on '%s' must still be live after the replay", leased.id())
                    .isEmpty();
        }

        @Test
        @DisplayName(
                "replayAll replays every dead letter its filter selects, whatever its page size and cursor")
        void required_replayAllReplaysWhatTheFilterSelects() {
            Instant t = now().plus(Duration.ofMinutes(1));
            Message a1 = message();
            Message a2 = message();
            Message a3 = message();
            Message b1 = message(TOPIC_B).build();
            committed(a1, a2, a3, b1);
            Map<Message, Instant> at = new LinkedHashMap<>();
            at.put(a1, t);
            at.put(a2, t.plusSeconds(10));
            at.put(a3, t.plusSeconds(20));
            at.put(b1, t);
            deadLetter(at);
            DeadLetterQuery filter =
                    DeadLetterQuery.all().topic(TOPIC_A).deadFrom(t.plusSeconds(10)).limit(1);
            DeadLetterPage first = admin().deadLetters(filter);
            Instant from = t.plusSeconds(10);
            if (first.next().isEmpty()) {
                throw new AssertionError(
                        String.format(
                                "deadLetters(topic %s, deadFrom %s, limit 1) selects '%s' (dead at %s,"
                                        + " deadFrom is inclusive) and '%s' (dead at %s), so its first"
                                        + " page must hold one of them and have a next cursor, but your"
                                        + " store returned the page %s and no next cursor (paged to its"
                                        + " end, that filter lists %s)",
                                TOPIC_A,
                                from,
                                a2.id(),
                                from,
                                a3.id(),
                                t.plusSeconds(20),
                                idsOfDead(first.items()),
                                idsOfDead(
                                        listAll(
                                                DeadLetterQuery.all()
                                                        .topic(TOPIC_A)
                                                        .deadFrom(from)))));
            }
            String cursor = first.next().get();
            int replayed = admin().replayAll(filter.after(cursor), now());
            assertThat(replayed)
                    .as(
                            "replayAll(topic %s, deadFrom %s, limit 1, after a cursor) must replay '%s' and"
                                    + " '%s' (page size and cursor are ignored), but your store said %d",
                            TOPIC_A, t.plusSeconds(10), a2.id(), a3.id(), replayed)
                    .isEqualTo(2);
            List<String> stay = idsOfDead(listAll(DeadLetterQuery.all()));
            assertThat(stay)
                    .as(
                            "only the dead letters outside the filter stay dead, listed oldest first"
                                    + " (%s, %s), but your store listed %s",
                            a1.id(), b1.id(), stay)
                    .containsExactly(a1.id(), b1.id());
            int rest =
                    admin().replayAll(DeadLetterQuery.all().deadBefore(t.plusSeconds(10)), now());
            assertThat(rest)
                    .as(
                            "replayAll(deadBefore %s) must replay '%s' and '%s', but your store said %d",
                            t.plusSeconds(10), a1.id(), b1.id(), rest)
                    .isEqualTo(2);
            assertThat(ids(claimAll(OTHER)))
                    .as("every replayed message must be claimable")
                    .containsExactlyInAnyOrder(a1.id(), a2.id(), a3.id(), b1.id());
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Discard
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Discard")
    class Discard extends Rules {
        @Test
        @DisplayName("a discarded dead letter is gone for good")
        void required_discardDeletesTheDeadLetterForGood() {
            Message m = message();
            committed(m);
            deadLetterNow(m);
            int discarded = admin().discard(List.of(m.id()));
            assertThat(discarded)
                    .as(
                            "discard of the dead letter '%s' must report 1, but your store said %d",
                            m.id(), discarded)
                    .isEqualTo(1);
            assertThat(listAll(DeadLetterQuery.all()))
                    .as("a discarded message is not listed")
                    .isEmpty();
            OutboxStatistics stats = admin().statistics(now());
            assertThat(List.of(stats.total().dead(), stats.total().ready()))
                    .as(
                            "a discarded message is counted nowhere, but your store counted [dead, ready] = %s",
                            List.of(stats.total().dead(), stats.total().ready()))
                    .containsExactly(0L, 0L);
            assertThat(admin().lastError(m.id()))
                    .as("a discarded message is unknown: it has no last error")
                    .isEmpty();
            advanceTo(now().plus(Duration.ofDays(1)));
            assertThat(claimAll(OTHER)).as("a discarded message is never claimed").isEmpty();
        }

        @Test
        @DisplayName("a discarded dead letter unblocks its key")
        void required_discardUnblocksItsKey() {
            String key = nextKey();
            Message head = keyed(key);
            Message next = keyed(key);
            committed(head);
            deadLetterNow(head);
            committed(next);
            assertThat(claimAll(OTHER))
                    .as(
                            "setting up: '%s' must be held back behind the dead letter '%s'",
                            next.id(), head.id())
                    .isEmpty();
            admin().discard(List.of(head.id()));
            List<Delivery> got = claimAll(OTHER);
            assertThat(ids(got))
                    .as(
                            "after the discard of '%s', '%s' (next in key '%s') must be claimable, but your"
                                    + " store returned %s",
                            head.id(), next.id(), key, deliveries(got))
                    .containsExactly(next.id());
        }

        @Test
        @DisplayName("discard ignores unknown ids and messages that are not dead")
        void required_discardIgnoresUnknownAndLiveMessages() {
            Message leased = message();
            committed(leased);
            Map<String, Delivery> d = claimEach(leased);
            Message ready = message();
            committed(ready);
            int discarded = admin().discard(List.of(UNKNOWN_ID, leased.id(), ready.id()));
            assertThat(discarded)
                    .as(
                            "discard of an unknown id, a leased and a ready message must discard nothing,"
                                    + " but your store said %d",
                            discarded)
                    .isZero();
            assertThat(ids(claimAll(OTHER)))
                    .as("'%s' must still be claimable after the discard", ready.id())
                    .containsExactly(ready.id());
            assertThat(
                            store().complete(
                                            new Completion(
                                                    OWNER, List.of(d.get(leased.id()).receipt()))))
                    .as("the lease on '%s' must still be live after the discard", leased.id())
                    .isEmpty();
        }

        @Test
        @DisplayName(
                "discardAll discards every dead letter its filter selects, whatever its page size, and nothing else")
        void required_discardAllDiscardsWhatTheFilterSelects() {
            Instant t = now().plus(Duration.ofMinutes(1));
            Message a1 = message();
            Message a2 = message();
            Message a3 = message();
            Message b1 = message(TOPIC_B).build();
            Message alive = message();
            committed(a1, a2, a3, b1, alive);
            Map<Message, Instant> at = new LinkedHashMap<>();
            at.put(a1, t);
            at.put(a2, t.plusSeconds(10));
            at.put(a3, t.plusSeconds(20));
            at.put(b1, t.plusSeconds(10));
            deadLetter(at); // its claim leased 'alive' too
            int discarded =
                    admin().discardAll(
                                    DeadLetterQuery.all()
                                            .topic(TOPIC_A)
                                            .deadBefore(t.plusSeconds(20))
                                            .limit(1));
            assertThat(discarded)
                    .as(
                            "discardAll(topic %s, deadBefore %s, limit 1) must discard '%s' and '%s' (the"
                                    + " page size is ignored), but your store said %d",
                            TOPIC_A, t.plusSeconds(20), a1.id(), a2.id(), discarded)
                    .isEqualTo(2);
            List<String> stay = idsOfDead(listAll(DeadLetterQuery.all()));
            assertThat(stay)
                    .as(
                            "only the dead letters outside the filter stay, listed oldest first (%s, %s),"
                                    + " but your store listed %s",
                            b1.id(), a3.id(), stay)
                    .containsExactly(b1.id(), a3.id());
            OutboxStatistics stats = admin().statistics(now());
            assertThat(
                            stats.total().dead()
                                    + stats.total().ready()
                                    + stats.total().leased()
                                    + stats.total().delayed())
                    .as(
                            "discardAll touches dead letters only: 2 dead letters and '%s' remain",
                            alive.id())
                    .isEqualTo(3);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Last error
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Last error")
    class LastError extends Rules {
        @Test
        @DisplayName("lastError is the error of the last release")
        void required_lastErrorIsTheErrorOfTheLastRelease() {
            Message m = message();
            committed(m);
            Delivery first = claimEach(m).get(m.id());
            store().release(new Release(OWNER, first.receipt(), now(), "tck: broker down (1)"));
            assertThat(admin().lastError(m.id()))
                    .as("lastError of '%s' after a release must be that release's error", m.id())
                    .contains("tck: broker down (1)");
            Delivery second = claimEach(m).get(m.id());
            String long2 = "tck: timeout (2) " + "x".repeat(Release.MAX_ERROR_LENGTH - 17);
            store().release(new Release(OWNER, second.receipt(), now(), long2));
            Optional<String> last = admin().lastError(m.id());
            assertThat(last)
                    .as(
                            "lastError of '%s' after a second release must be the second error, exactly"
                                    + " (%d characters), but your store said %s",
                            m.id(),
                            long2.length(),
                            last.map(
                                    e ->
                                            e.length()
                                                    + " characters: "
                                                    + e.substring(0, Math.min(40, e.length()))
                                                    + "…"))
                    .contains(long2);
        }

        @Test
        @DisplayName("lastError of a dead letter is its reason")
        void required_lastErrorOfADeadLetterIsItsReason() {
            Message m = message();
            committed(m);
            Delivery first = claimEach(m).get(m.id());
            store().release(new Release(OWNER, first.receipt(), now(), "tck: broker down"));
            deadLetterNow(m);
            Optional<String> last = admin().lastError(m.id());
            assertThat(last)
                    .as(
                            "lastError of the dead letter '%s' must be its reason, not the earlier release"
                                    + " error, but your store said %s",
                            m.id(), last)
                    .contains(reasonOf(m));
        }

        @Test
        @DisplayName("lastError is empty for an unknown message and for one that never failed")
        void required_lastErrorIsEmptyForUnknownOrNeverFailedMessages() {
            Message ready = message();
            Message leased = message();
            committed(leased);
            claimEach(leased);
            committed(ready);
            for (String id : List.of(UNKNOWN_ID, ready.id(), leased.id())) {
                Optional<String> last = admin().lastError(id);
                assertThat(last)
                        .as(
                                "'%s' never failed (unknown, ready or leased), so lastError must be empty,"
                                        + " but your store said %s",
                                id, last)
                        .isEmpty();
            }
        }
    }
}
