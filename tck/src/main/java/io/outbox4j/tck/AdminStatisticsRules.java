package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The admin kit's rules of the group "Statistics"; {@link OutboxAdminContract} runs them as its
 * {@code @Nested} class {@code Statistics}.
 */
abstract class AdminStatisticsRules extends AdminRules {
    AdminStatisticsRules(OutboxAdminContract kit) {
        super(kit);
    }

    @Test
    @DisplayName("statistics count ready, delayed, leased and dead messages per topic and in total")
    void required_statisticsCountEachStatePerTopicAndInTotal() {
        Message leased = message();
        Message waiting = message();
        Message deadA = message();
        Message completed = message();
        Message deadB = message(TOPIC_B).build();
        committed(leased, waiting, deadA, completed, deadB);
        Map<String, Delivery> d = claimEach(leased, waiting, deadA, completed, deadB);
        Instant later = now().plus(Duration.ofMinutes(10));
        store().release(new Release(OWNER, claimed(d, waiting).receipt(), later, "tck"));
        store().deadLetter(new DeadLetter(OWNER, claimed(d, deadA).receipt(), "tck", now()));
        store().deadLetter(new DeadLetter(OWNER, claimed(d, deadB).receipt(), "tck", now()));
        store().complete(new Completion(OWNER, List.of(claimed(d, completed).receipt())));
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
        store().release(new Release(OWNER, claimed(d, retried).receipt(), retryAt, "tck"));
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
        SameKey k = committedHeadAndFollower();
        List<Delivery> got =
                store().claim(new ClaimRequest(OWNER, now(), LEASE, 1)); // only the head
        assertThat(ids(got))
                .as(
                        "setting up: claim(limit=1) must lease the head of the key '%s'",
                        k.head().key().orElseThrow())
                .containsExactly(k.head().id());
        return new HeadAndFollower(k.head(), k.follower(), got.get(0));
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
