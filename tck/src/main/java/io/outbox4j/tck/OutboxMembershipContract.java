package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The membership contract kit: one JUnit 5 test per rule of {@link OutboxMembership} and of claims
 * made {@link ClaimRequest#member() as a member} (docs/scale-out.md).
 *
 * <p>A store implementer extends this class in their test sources and supplies the store under test
 * ({@link #store()}, which implements both {@link OutboxStore} and {@link OutboxMembership}),
 * optionally a {@link #secondStore()} over the same storage, a committed enqueue and a way to empty
 * the storage of messages <em>and members</em>. Every rule is a package-private test method named
 * {@code required_<rule>} in a {@link Nested} class; none is ever skipped.
 *
 * <p>Time: member leases are judged by the store's own clock, so the rules about a lapsed member
 * wait for real (about {@link #shortMemberLease()} each). A member's claims are timed by the
 * store's clock: the kit claims at this JVM's clock with messages due an hour before it, and moves
 * a claim's {@code now} by hours either way to prove that a claimer's clock can neither keep
 * buckets its membership lost nor time a member's leases.
 */
public abstract class OutboxMembershipContract {
    /** The member lease of rules that do not wait for a lapse. */
    static final Duration LONG = Duration.ofMinutes(5);

    /** The message lease of every claim. */
    static final Duration MESSAGE_LEASE = Duration.ofMinutes(5);

    /** How long before the kit's clock its messages are due. */
    static final Duration DUE_BEFORE = Duration.ofHours(1);

    static final String A = "tck-member-a";
    static final String B = "tck-member-b";
    static final String C = "tck-member-c";

    private String prefix = "";
    private int counter;

    /** Creates the kit; subclasses supply the factories. */
    protected OutboxMembershipContract() {}

    /**
     * Returns the store under test, built with the store's defaults; it must implement {@link
     * OutboxMembership} too.
     *
     * @return the store under test
     */
    protected abstract OutboxStore store();

    /**
     * Returns another store instance over the same storage (another pool, another client), as a
     * second relay would use. The default returns {@link #store()}.
     *
     * @return a second store instance
     */
    protected OutboxStore secondStore() {
        return store();
    }

    /** Removes every message and every member from the storage. Called before each rule. */
    protected abstract void resetStore();

    /**
     * Enqueues the messages in one transaction that commits.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    /**
     * The member lease of the rules that wait for a membership to lapse; the default is 400 ms.
     * Lengthen it only when the store's round trips are slow enough that a renewal and a claim
     * cannot both happen well inside it.
     *
     * @return a lease of at least {@link OutboxMembership#MIN_LEASE}
     */
    protected Duration shortMemberLease() {
        return Duration.ofMillis(400);
    }

    // ------------------------------------------------------------------------------------------------
    // Kit helpers
    // ------------------------------------------------------------------------------------------------

    @BeforeEach
    void resetStoreAndNames() {
        resetStore();
        prefix = "m" + UUID.randomUUID().toString().substring(0, 8) + "-";
        counter = 0;
    }

    private OutboxMembership membership(OutboxStore store) {
        if (store instanceof OutboxMembership m) {
            return m;
        }
        throw new IllegalStateException(
                store.getClass().getName()
                        + " does not implement OutboxMembership; the membership kit needs a store"
                        + " that does");
    }

    private OutboxMembership members() {
        return membership(store());
    }

    /**
     * The time of a member claim: this JVM's clock (the kit's messages are due an hour before it,
     * so that they are due by the store's clock too).
     */
    private static Instant claimTime() {
        return Instant.now();
    }

    private List<Delivery> claimAsMember(OutboxStore on, String member, Instant now, int limit) {
        return on.claim(new ClaimRequest(member, now, MESSAGE_LEASE, limit, true));
    }

    private List<Delivery> claimAsMember(OutboxStore on, String member) {
        return claimAsMember(on, member, claimTime(), ClaimRequest.MAX_LIMIT);
    }

    private Message message(@Nullable String key) {
        Message.Builder b =
                Message.builder()
                        .id(prefix + counter++)
                        .topic("tck.membership")
                        .module("tck")
                        .notBefore(Instant.now().minus(DUE_BEFORE))
                        .payload("p" + counter);
        if (key != null) {
            b.key(key);
        }
        return b.build();
    }

    /** One message for each of {@code keys} keys whose buckets cover every bucket at least once. */
    private List<Message> onePerBucket() {
        List<Message> out = new ArrayList<>();
        Set<Integer> covered = new HashSet<>();
        for (int i = 0; covered.size() < Buckets.COUNT; i++) {
            String key = prefix + "k" + i;
            if (covered.add(Buckets.of(key))) {
                out.add(message(key));
            }
        }
        return out;
    }

    /** A key of the given bucket. */
    private String keyIn(int bucket) {
        for (int i = 0; ; i++) {
            String key = prefix + "b" + bucket + "-" + i;
            if (Buckets.of(key) == bucket) {
                return key;
            }
        }
    }

    private static Set<Integer> bucketsOf(List<Delivery> deliveries) {
        Set<Integer> out = new TreeSet<>();
        for (Delivery d : deliveries) {
            d.message().key().ifPresent(k -> out.add(Buckets.of(k)));
        }
        return out;
    }

    private static long unkeyed(List<Delivery> deliveries) {
        return deliveries.stream().filter(d -> d.message().key().isEmpty()).count();
    }

    /** Waits until the store counts the member as lapsed, by its own clock. */
    private void awaitLapsed(String member) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            boolean live =
                    members().members().stream().anyMatch(m -> m.id().equals(member) && m.live());
            if (!live) {
                return;
            }
            sleep(Duration.ofMillis(50));
        }
        throw new AssertionError(
                "member '"
                        + member
                        + "' renewed for "
                        + shortMemberLease()
                        + " is still listed as live 10 s later: members() must judge the lease by"
                        + " the store's clock");
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static Set<Integer> expected(String member, String... all) {
        return new TreeSet<>(Buckets.assign(List.of(all)).get(member));
    }

    // ------------------------------------------------------------------------------------------------
    // The rules
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("bucket ownership")
    class Ownership {
        @Test
        @DisplayName("a single member owns every bucket")
        void required_aSingleMemberOwnsEveryBucket() {
            Membership m = members().renew(A, LONG);
            assertThat(m.buckets())
                    .as("the only member must own all %d buckets", Buckets.COUNT)
                    .hasSize(Buckets.COUNT)
                    .isSortedAccordingTo(Integer::compare);
            assertThat(m.members())
                    .as("the live members after the first renewal")
                    .containsExactly(A);
            assertThat(m.leaseUntil())
                    .as("the membership must end after the store's time of the renewal")
                    .isAfter(m.storeTime());
        }

        @Test
        @DisplayName("buckets are spread over the live members by rendezvous hashing")
        void required_bucketsAreSpreadByRendezvousHashing() {
            members().renew(A, LONG);
            members().renew(B, LONG);
            membership(secondStore()).renew(C, LONG);
            for (String m : List.of(A, B, C)) {
                Membership renewed = members().renew(m, LONG);
                assertThat(new TreeSet<>(renewed.buckets()))
                        .as(
                                "the buckets of %s among {A, B, C} must be Buckets.assign's, the same"
                                        + " in every store",
                                m)
                        .isEqualTo(expected(m, A, B, C));
                assertThat(renewed.members()).containsExactly(A, B, C);
            }
            List<Member> listed = members().members();
            assertThat(listed).extracting(Member::id).containsExactly(A, B, C);
            assertThat(listed).allSatisfy(m -> assertThat(m.live()).isTrue());
            assertThat(listed.stream().mapToInt(Member::buckets).sum())
                    .as("every bucket has exactly one owner")
                    .isEqualTo(Buckets.COUNT);
        }

        @Test
        @DisplayName("a joining member takes its buckets at once, and only about its share")
        void required_aJoinMovesOnlyTheJoinersShare() {
            Membership first = members().renew(A, LONG);
            assertThat(first.buckets()).hasSize(Buckets.COUNT);
            Membership joined = members().renew(B, LONG);
            assertThat(new TreeSet<>(joined.buckets()))
                    .as("the joiner's buckets right after its first renewal")
                    .isEqualTo(expected(B, A, B));
            assertThat(joined.handedOver())
                    .as("buckets handed over by the join: exactly the joiner's")
                    .isEqualTo(joined.buckets().size());
        }

        @Test
        @DisplayName("renewing with an invalid member id or lease is refused")
        void required_invalidRenewalsAreRefused() {
            assertThat(
                            org.assertj.core.api.Assertions.catchThrowable(
                                    () -> members().renew(" ", LONG)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("member");
            assertThat(
                            org.assertj.core.api.Assertions.catchThrowable(
                                    () -> members().renew(A, Duration.ofMillis(1))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease");
            assertThat(members().members()).as("a refused renewal records nobody").isEmpty();
        }
    }

    @Nested
    @DisplayName("claims as a member")
    class Claims {
        @Test
        @DisplayName(
                "a claim as a member takes keyed messages only of its buckets, and any unkeyed")
        void required_claimAsMemberTakesOnlyItsBuckets() {
            members().renew(A, LONG);
            Set<Integer> ofB = new TreeSet<>(membership(secondStore()).renew(B, LONG).buckets());
            Set<Integer> ofA = new TreeSet<>(members().renew(A, LONG).buckets());
            List<Message> all = new ArrayList<>(onePerBucket());
            all.add(message(null));
            all.add(message(null));
            enqueueCommitted(all);
            List<Delivery> byA = claimAsMember(store(), A);
            assertThat(bucketsOf(byA))
                    .as("buckets of the keyed messages claimed by member A, which owns %s", ofA)
                    .isEqualTo(ofA);
            assertThat(unkeyed(byA)).as("unkeyed messages are anybody's").isEqualTo(2);
            List<Delivery> byB = claimAsMember(secondStore(), B);
            assertThat(bucketsOf(byB))
                    .as("buckets of the keyed messages claimed by member B, which owns %s", ofB)
                    .isEqualTo(ofB);
            assertThat(byA.size() + byB.size()).isEqualTo(all.size());
        }

        @Test
        @DisplayName("a claim not made as a member takes every bucket, members or not")
        void required_claimNotAsMemberTakesEveryBucket() {
            members().renew(A, LONG);
            members().renew(B, LONG);
            List<Message> all = onePerBucket();
            enqueueCommitted(all);
            List<Delivery> claimed =
                    store().claim(new ClaimRequest(C, claimTime(), MESSAGE_LEASE, 10_000));
            assertThat(claimed)
                    .as("a claim with member=false ignores ownership")
                    .hasSize(all.size());
        }

        @Test
        @DisplayName("a claimer that never renewed claims no keyed message as a member")
        void required_unknownMemberClaimsNoKeyedMessage() {
            members().renew(A, LONG);
            enqueueCommitted(List.of(message(prefix + "x"), message(null)));
            List<Delivery> byC = claimAsMember(store(), C);
            assertThat(bucketsOf(byC)).as("keyed messages claimed by a non-member").isEmpty();
            assertThat(unkeyed(byC)).isEqualTo(1);
        }

        @Test
        @DisplayName("a lapsed member claims no keyed message, whatever time its own clock says")
        void required_lapsedMemberClaimsNoKeyedMessageWhateverItsClock() {
            members().renew(A, shortMemberLease());
            // due two hours ago, so that even a claimer whose clock is an hour behind sees them due
            Instant past = Instant.now().minus(Duration.ofHours(2));
            enqueueCommitted(
                    List.of(
                            message(prefix + "x").toBuilder().notBefore(past).build(),
                            message(prefix + "y").toBuilder().notBefore(past).build()));
            awaitLapsed(A);
            Instant wall = claimTime();
            for (Instant now :
                    List.of(
                            wall.minus(Duration.ofHours(1)),
                            wall,
                            wall.plus(Duration.ofHours(1)))) {
                assertThat(claimAsMember(store(), A, now, 100))
                        .as(
                                "member A's lease ended by the store's clock; a claim as A with"
                                        + " now=%s must take no keyed message (membership is"
                                        + " judged by the store's clock, not the claimer's)",
                                now)
                        .isEmpty();
            }
        }

        @Test
        @DisplayName("a claim as a member is timed by the store's clock, whatever its now says")
        void required_memberClaimsAreTimedByTheStoresClock() {
            members().renew(A, LONG);
            membership(secondStore()).renew(B, LONG);
            Message first = message(null);
            Message second = message(null);
            Message third = message(null);
            enqueueCommitted(List.of(first, second, third));
            Instant wall = claimTime();
            assertThat(claimAsMember(store(), A, wall.minus(Duration.ofHours(1)), 1))
                    .extracting(d -> d.message().id())
                    .as("member A's claim with a clock an hour behind")
                    .containsExactly(first.id());
            assertThat(claimAsMember(store(), A, wall, 1))
                    .extracting(d -> d.message().id())
                    .as("member A's claim on time")
                    .containsExactly(second.id());
            assertThat(claimAsMember(secondStore(), B, wall.plus(Duration.ofHours(2)), 10))
                    .extracting(d -> d.message().id())
                    .as(
                            "member B's claim with a clock two hours ahead must take only '%s': A's"
                                    + " leases on '%s' (claimed with a clock an hour behind) and"
                                    + " '%s' last %s by the store's clock, which times every lease"
                                    + " of a member's claim (not the claimer's now)",
                            third.id(), first.id(), second.id(), MESSAGE_LEASE)
                    .containsExactly(third.id());
        }

        @Test
        @DisplayName("a lapsed member's buckets go to the live members at their next renewal")
        void required_lapsedMembersBucketsMoveAtTheNextRenewal() {
            members().renew(B, LONG);
            Membership a = members().renew(A, shortMemberLease());
            assertThat(a.buckets()).isNotEmpty();
            enqueueCommitted(onePerBucket());
            awaitLapsed(A);
            Membership b = membership(secondStore()).renew(B, LONG);
            assertThat(b.buckets())
                    .as("after A lapsed, B's next renewal must give B every bucket")
                    .hasSize(Buckets.COUNT);
            assertThat(b.members()).as("live members after A lapsed").containsExactly(B);
            assertThat(b.handedOver())
                    .as("B's renewal hands over exactly the lapsed member's buckets")
                    .isEqualTo(a.buckets().size());
            assertThat(bucketsOf(claimAsMember(secondStore(), B)))
                    .as("B claims the messages of every bucket")
                    .hasSize(Buckets.COUNT);
            Membership back = members().renew(A, LONG);
            assertThat(new TreeSet<>(back.buckets()))
                    .as("A coming back takes its rendezvous share again")
                    .isEqualTo(expected(A, A, B));
        }

        @Test
        @DisplayName("leaving hands the member's buckets over at once")
        void required_leaveHandsBucketsOverAtOnce() {
            members().renew(A, LONG);
            membership(secondStore()).renew(B, LONG);
            enqueueCommitted(onePerBucket());
            members().leave(A);
            assertThat(members().members())
                    .as("members after A left")
                    .extracting(Member::id)
                    .containsExactly(B);
            assertThat(bucketsOf(claimAsMember(store(), A)))
                    .as("A left: it claims no keyed message as a member")
                    .isEmpty();
            assertThat(bucketsOf(claimAsMember(secondStore(), B)))
                    .as("B owns every bucket the moment A has left, without renewing")
                    .hasSize(Buckets.COUNT);
            members().leave(A); // leaving twice changes nothing
            assertThat(members().members()).extracting(Member::id).containsExactly(B);
        }

        @Test
        @DisplayName(
                "a handover never inverts a key: the new owner waits for the old owner's lease")
        void required_handoverNeverInvertsAKey() {
            members().renew(A, LONG);
            String moving = null;
            for (int bucket : expected(B, A, B)) {
                moving = keyIn(bucket);
                break;
            }
            Message first = message(moving);
            Message second = message(moving);
            enqueueCommitted(List.of(first, second));
            List<Delivery> byA = claimAsMember(store(), A, claimTime(), 1);
            assertThat(byA).extracting(d -> d.message().id()).containsExactly(first.id());
            membership(secondStore()).renew(B, LONG); // B joins and takes the key's bucket
            assertThat(claimAsMember(secondStore(), B))
                    .as(
                            "the key's first message is still leased by A: B, its bucket's new"
                                    + " owner, must not take the second")
                    .isEmpty();
            assertThat(claimAsMember(store(), A))
                    .as("A lost the bucket: it must not take the second message either")
                    .isEmpty();
            assertThat(store().complete(new Completion(A, List.of(byA.get(0).receipt()))))
                    .as("A's completion of a lease it holds stays valid after the handover")
                    .isEmpty();
            assertThat(claimAsMember(secondStore(), B))
                    .extracting(d -> d.message().id())
                    .as("after A completed the first, B takes the second")
                    .containsExactly(second.id());
        }
    }

    @Nested
    @DisplayName("membership under concurrency")
    class Concurrency {
        @Test
        @DisplayName(
                "members joining, leaving and claiming at once drain every message in key order")
        void required_churningMembersDrainEveryKeyInOrder() throws Exception {
            int keys = 40;
            int perKey = 25;
            List<Message> all = new ArrayList<>();
            Map<String, List<String>> order = new HashMap<>();
            for (int i = 0; i < perKey; i++) {
                for (int k = 0; k < keys; k++) {
                    Message m = message(prefix + "key" + k);
                    all.add(m);
                    order.computeIfAbsent(m.key().orElseThrow(), x -> new ArrayList<>())
                            .add(m.id());
                }
            }
            enqueueCommitted(all);
            Map<String, List<String>> published = new ConcurrentHashMap<>();
            Set<String> done = ConcurrentHashMap.newKeySet();
            AtomicBoolean inversion = new AtomicBoolean();
            List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newFixedThreadPool(3);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                OutboxStore on = w % 2 == 0 ? store() : secondStore();
                String me = "tck-churn-" + w;
                workers.add(
                        pool.submit(
                                () -> {
                                    int round = 0;
                                    while (done.size() < all.size()
                                            && System.nanoTime() < deadline) {
                                        round++;
                                        if (round % 7 == 0) {
                                            membership(on).leave(me);
                                        }
                                        membership(on).renew(me, LONG);
                                        List<Delivery> got = claimAsMember(on, me, claimTime(), 7);
                                        List<String> receipts = new ArrayList<>();
                                        for (Delivery d : got) {
                                            String key = d.message().key().orElseThrow();
                                            List<String> seen =
                                                    published.computeIfAbsent(
                                                            key,
                                                            x ->
                                                                    java.util.Collections
                                                                            .synchronizedList(
                                                                                    new ArrayList<>()));
                                            synchronized (seen) {
                                                int expectedIndex = seen.size();
                                                List<String> ofKey =
                                                        Objects.requireNonNull(
                                                                order.get(key), key); // enqueued
                                                if (!ofKey.get(expectedIndex)
                                                        .equals(d.message().id())) {
                                                    inversion.set(true);
                                                    errors.add(
                                                            "key "
                                                                    + key
                                                                    + ": expected "
                                                                    + ofKey.get(expectedIndex)
                                                                    + " next, got "
                                                                    + d.message().id());
                                                }
                                                seen.add(d.message().id());
                                            }
                                            receipts.add(d.receipt());
                                        }
                                        if (!receipts.isEmpty()) {
                                            assertThat(on.complete(new Completion(me, receipts)))
                                                    .isEmpty();
                                            for (Delivery d : got) {
                                                done.add(d.message().id());
                                            }
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : workers) {
                f.get(90, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
            assertThat(inversion.get())
                    .as("a key's messages must be published in enqueue order: %s", errors)
                    .isFalse();
            assertThat(done)
                    .as(
                            "three members joining, leaving and claiming must drain all %d messages"
                                    + " within 60 s (a message parked behind nothing, or a bucket"
                                    + " left without owner, stalls its key)",
                            all.size())
                    .hasSize(all.size());
        }
    }
}
