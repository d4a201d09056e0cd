package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStatistics;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The admin kit's rules of the group "Discard"; {@link OutboxAdminContract} runs them as its
 * {@code @Nested} class {@code Discard}.
 */
abstract class AdminDiscardRules extends AdminRules {
    AdminDiscardRules(OutboxAdminContract kit) {
        super(kit);
    }

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
        Message[] held = headDeadWithAFollower(key);
        Message head = held[0];
        Message next = held[1];
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
        assertThat(store().complete(new Completion(OWNER, List.of(claimed(d, leased).receipt()))))
                .as("the lease on '%s' must still be live after the discard", leased.id())
                .isEmpty();
    }

    @Test
    @DisplayName(
            "discardAll discards every dead letter its filter selects, whatever its page size, and nothing else")
    void required_discardAllDiscardsWhatTheFilterSelects() {
        Message alive = message();
        Spread s = spreadDeadLetters(Duration.ofSeconds(10), alive); // its claim leases 'alive' too
        Instant t = s.t();
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
                        TOPIC_A, t.plusSeconds(20), s.a1().id(), s.a2().id(), discarded)
                .isEqualTo(2);
        List<String> stay = idsOfDead(listAll(DeadLetterQuery.all()));
        assertThat(stay)
                .as(
                        "only the dead letters outside the filter stay, listed oldest first (%s, %s),"
                                + " but your store listed %s",
                        s.b().id(), s.a3().id(), stay)
                .containsExactly(s.b().id(), s.a3().id());
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
