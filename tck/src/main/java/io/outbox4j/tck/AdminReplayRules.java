package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The admin kit's rules of the group "Replay"; {@link OutboxAdminContract} runs them as its
 * {@code @Nested} class {@code Replay}.
 */
abstract class AdminReplayRules extends AdminRules {
    AdminReplayRules(OutboxAdminContract kit) {
        super(kit);
    }

    @Test
    @DisplayName(
            "a replayed dead letter is due at the replay's instant, on attempt 1, and no longer listed")
    void required_replayMakesTheDeadLetterDueAgainOnAttemptOne() {
        Message m = message();
        committed(m);
        Map<String, Delivery> first = claimEach(m);
        store().release(new Release(OWNER, claimed(first, m).receipt(), now(), "tck: retry"));
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
        assertAttempt(
                got.get(0),
                1,
                "a replay resets the attempts: the next claim of '%s' (tried twice "
                        + "before) is attempt 1",
                m.id());
    }

    @Test
    @DisplayName(
            "a replayed dead letter unblocks its key: it is claimed first, then the messages behind it")
    void required_replayUnblocksItsKey() {
        String key = nextKey();
        Message[] held = headDeadWithAFollower(key);
        Message head = held[0];
        Message next = held[1];
        admin().replay(List.of(head.id()), now());
        List<Delivery> got = claimAll(OTHER);
        assertThat(ids(got).isEmpty() ? "" : ids(got).get(0))
                .as(
                        "after the replay of '%s', the first of its key, a claim must lease it first"
                                + " (its follower '%s' may come after it), but your store returned %s",
                        head.id(), next.id(), deliveries(got))
                .isEqualTo(head.id());
        assertAttempt(got.get(0), 1, "a replayed message starts again at attempt 1");
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
        store().release(new Release(OWNER, claimed(d, waiting).receipt(), retryAt, "tck"));
        Message ready = message();
        committed(ready);
        int replayed =
                admin().replay(List.of(UNKNOWN_ID, leased.id(), waiting.id(), ready.id()), now());
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
        assertThat(store().complete(new Completion(OWNER, List.of(claimed(d, leased).receipt()))))
                .as("the lease on '%s' must still be live after the replay", leased.id())
                .isEmpty();
    }

    @Test
    @DisplayName(
            "replayAll replays every dead letter its filter selects, whatever its page size and cursor")
    void required_replayAllReplaysWhatTheFilterSelects() {
        Spread s = spreadDeadLetters(Duration.ZERO);
        Instant t = s.t();
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
                            s.a2().id(),
                            from,
                            s.a3().id(),
                            t.plusSeconds(20),
                            idsOfDead(first.items()),
                            idsOfDead(
                                    listAll(DeadLetterQuery.all().topic(TOPIC_A).deadFrom(from)))));
        }
        String cursor = first.next().get();
        int replayed = admin().replayAll(filter.after(cursor), now());
        assertThat(replayed)
                .as(
                        "replayAll(topic %s, deadFrom %s, limit 1, after a cursor) must replay '%s' and"
                                + " '%s' (page size and cursor are ignored), but your store said %d",
                        TOPIC_A, t.plusSeconds(10), s.a2().id(), s.a3().id(), replayed)
                .isEqualTo(2);
        List<String> stay = idsOfDead(listAll(DeadLetterQuery.all()));
        assertThat(stay)
                .as(
                        "only the dead letters outside the filter stay dead, listed oldest first"
                                + " (%s, %s), but your store listed %s",
                        s.a1().id(), s.b().id(), stay)
                .containsExactly(s.a1().id(), s.b().id());
        int rest = admin().replayAll(DeadLetterQuery.all().deadBefore(t.plusSeconds(10)), now());
        assertThat(rest)
                .as(
                        "replayAll(deadBefore %s) must replay '%s' and '%s', but your store said %d",
                        t.plusSeconds(10), s.a1().id(), s.b().id(), rest)
                .isEqualTo(2);
        assertThat(ids(claimAll(OTHER)))
                .as("every replayed message must be claimable")
                .containsExactlyInAnyOrder(s.a1().id(), s.a2().id(), s.a3().id(), s.b().id());
    }
}
