package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.Member;
import io.outbox4j.api.Message;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Started relays are members of their outbox: they split the buckets by rendezvous hashing, each
 * publishes keyed messages only of its own buckets, a closed relay leaves at once (the other takes
 * its buckets), and a relay built with {@code membership(false)} or never started is no member.
 */
class RelayMembershipTest {
    private static final Duration MEMBER_LEASE = Duration.ofMillis(600);

    private static Relay relay(InMemoryOutboxStore store, KeyTrackingPublisher p, String owner) {
        return Relay.builder(store, p)
                .owner(owner)
                .pollInterval(Duration.ofMillis(20))
                .memberLease(MEMBER_LEASE)
                .build();
    }

    private static Set<Integer> buckets(KeyTrackingPublisher p) {
        Set<Integer> out = new HashSet<>();
        for (String id : p.firstPublished) {
            out.add(Buckets.of("key-" + id.substring(id.indexOf('-') + 1)));
        }
        return out;
    }

    @Test
    void twoStartedRelays_splitTheBuckets_andACloseHandsThemOverAtOnce() {
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        KeyTrackingPublisher a = new KeyTrackingPublisher(0);
        KeyTrackingPublisher b = new KeyTrackingPublisher(0);
        Relay ra = relay(store, a, "relay-a");
        Relay rb = relay(store, b, "relay-b");
        try {
            ra.start();
            Fixtures.await(
                    "relay-a owns every bucket",
                    Duration.ofSeconds(5),
                    () -> ra.membership().map(m -> m.buckets().size() == 256).orElse(false));
            rb.start();
            List<Integer> ofB = Buckets.assign(List.of("relay-a", "relay-b")).get("relay-b");
            Fixtures.await(
                    "both relays see the split",
                    Duration.ofSeconds(5),
                    () ->
                            rb.membership().map(m -> m.buckets().equals(ofB)).orElse(false)
                                    && ra.membership()
                                            .map(m -> m.buckets().size() == 256 - ofB.size())
                                            .orElse(false));
            List<Message> messages = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                messages.add(Fixtures.message(i + "-" + (i % 200), "key-" + (i % 200)));
            }
            store.enqueueCommitted(messages);
            ra.wakeUp();
            rb.wakeUp();
            Fixtures.await("the outbox is empty", Duration.ofSeconds(20), () -> store.size() == 0);
            assertThat(buckets(b))
                    .as("relay-b published keyed messages only of its own buckets")
                    .isSubsetOf(ofB);
            assertThat(buckets(a)).as("relay-a: only the others").doesNotContainAnyElementsOf(ofB);
            assertThat(a.firstPublished.size() + b.firstPublished.size()).isEqualTo(2000);
            assertThat(a.overlaps).isEmpty();

            ra.close();
            assertThat(store.members())
                    .as("relay-a left on close")
                    .extracting(Member::id)
                    .containsExactly("relay-b");
            List<Message> after = new ArrayList<>();
            for (int i = 2000; i < 2400; i++) {
                after.add(Fixtures.message(i + "-" + (i % 200), "key-" + (i % 200)));
            }
            store.enqueueCommitted(after);
            rb.wakeUp();
            Fixtures.await(
                    "relay-b drains every bucket after relay-a left",
                    Duration.ofSeconds(10),
                    () -> store.size() == 0);
            Set<Integer> all = new HashSet<>();
            for (int i = 0; i < 200; i++) {
                all.add(Buckets.of("key-" + i));
            }
            assertThat(buckets(b)).as("relay-b took relay-a's buckets").containsAll(all);
        } finally {
            ra.close();
            rb.close();
        }
        assertThat(store.members()).as("every relay left").isEmpty();
    }

    @Test
    void aRelayWithoutMembership_orNeverStarted_isNoMember() {
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        Relay off =
                Relay.builder(store, new KeyTrackingPublisher(0))
                        .owner("off")
                        .membership(false)
                        .pollInterval(Duration.ofMillis(20))
                        .build();
        Relay once = relay(store, new KeyTrackingPublisher(0), "once");
        try {
            off.start();
            store.enqueueCommitted(List.of(Fixtures.message("m-1", "k")));
            off.wakeUp();
            Fixtures.await("published", Duration.ofSeconds(5), () -> store.size() == 0);
            off.close(); // before the commit: the store's wake-ups would have it claim m-2
            store.enqueueCommitted(List.of(Fixtures.message("m-2", "k")));
            assertThat(once.runOnce().published())
                    .as("runOnce of a relay never started claims every bucket")
                    .isEqualTo(1);
            assertThat(off.membership()).isEmpty();
            assertThat(once.membership()).isEmpty();
            assertThat(store.members()).isEmpty();
        } finally {
            off.close();
            once.close();
        }
    }

    @Test
    void aMemberLeaseOutsideItsBounds_isRefusedAtBuild() {
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        for (Duration bad : List.of(Duration.ofMillis(99), Duration.ofHours(2))) {
            assertThat(
                            org.assertj.core.api.Assertions.catchThrowable(
                                    () ->
                                            Relay.builder(store, new KeyTrackingPublisher(0))
                                                    .memberLease(bad)
                                                    .build()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("memberLease must be between 100ms and 60m");
        }
    }
}
