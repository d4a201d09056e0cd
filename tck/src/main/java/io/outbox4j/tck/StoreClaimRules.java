package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static io.outbox4j.tck.Describe.ids;
import static io.outbox4j.tck.Describe.idsOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit's rules of the group "Claim"; {@link OutboxStoreContract} runs them as its
 * {@code @Nested} class {@code Claim}.
 */
abstract class StoreClaimRules extends StoreRules {
    StoreClaimRules(OutboxStoreContract kit) {
        super(kit);
    }

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
