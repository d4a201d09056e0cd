package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A member relay whose clock is an hour off its store's times its leases by the store's clock
 * (docs/scale-out.md, "Clocks"): the store times its claims, and the relay sends its renewals in
 * the store's frame (the offset read at each membership renewal), so the leases it holds stay live
 * by the store's clock while it publishes, and a claimer on the store's clock cannot take them.
 */
class RelayClockSkewTest {
    /** Renewed every 2 s to 6 s ahead: a renewal may be 4 s late on a loaded machine. */
    private static final Duration LEASE = Duration.ofSeconds(6);

    /** Holds its first call until released; records what it published. */
    static final class HeldPublisher implements Publisher {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final List<String> published = new CopyOnWriteArrayList<>();

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            entered.countDown();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            messages.forEach(m -> published.add(m.id()));
            return messages.stream().map(m -> PublishOutcome.published()).toList();
        }
    }

    /**
     * The reference store, noting (by its own clock) when the relay's first claim took messages and
     * the lease ends of the relay's renewals that held.
     */
    static final class WatchedStore extends InMemoryOutboxStore {
        private final Clock clock;
        volatile Instant firstClaimAt;
        final List<Instant> renewedUntil = new CopyOnWriteArrayList<>();

        WatchedStore(Clock clock) {
            super(clock);
            this.clock = clock;
        }

        @Override
        public List<Delivery> claim(ClaimRequest request) {
            List<Delivery> claimed = super.claim(request);
            if (!request.owner().equals("other") && !claimed.isEmpty() && firstClaimAt == null) {
                firstClaimAt = clock.instant();
            }
            return claimed;
        }

        @Override
        public Set<String> extend(Extension extension) {
            Set<String> stale = super.extend(extension);
            if (stale.isEmpty()) {
                renewedUntil.add(extension.until());
            }
            return stale;
        }
    }

    @ParameterizedTest(name = "relay clock {0} s off the store's")
    @ValueSource(longs = {3600, -3600})
    void aSkewedMemberTimesItsLeasesByTheStoresClock(long skewSeconds) throws Exception {
        Clock storeClock = Clock.systemUTC();
        WatchedStore store = new WatchedStore(storeClock);
        HeldPublisher publisher = new HeldPublisher();
        Relay relay =
                Relay.builder(store, publisher)
                        .owner("skewed")
                        .clock(Clock.offset(Clock.systemUTC(), Duration.ofSeconds(skewSeconds)))
                        .lease(LEASE)
                        .pollInterval(Duration.ofMillis(20))
                        .memberLease(Duration.ofSeconds(2))
                        .deliveryTimeout(Duration.ofSeconds(20))
                        .build();
        store.enqueueCommitted(
                List.of(Fixtures.message("keyed", "k"), Fixtures.message("unkeyed")));
        try {
            relay.start();
            assertThat(publisher.entered.await(10, TimeUnit.SECONDS))
                    .as(
                            "a member relay %d s off the store's clock claims (the store times its"
                                    + " claims)",
                            skewSeconds)
                    .isTrue();
            // held past the first lease: only renewals in the store's frame keep the leases live
            // (a renewal timed by a clock an hour behind would end them an hour ago, one timed by a
            // clock an hour ahead was never sent). Instead of waiting the lease out, wait for a
            // renewal that moves the leases past the first lease's end, then claim as of after it.
            Instant firstLeaseEnd = store.firstClaimAt.plus(LEASE);
            Fixtures.await(
                    "a renewal, in the store's frame, to a lease from now that ends past the"
                            + " first one ("
                            + firstLeaseEnd
                            + ")",
                    Duration.ofSeconds(20),
                    () ->
                            store.renewedUntil.stream()
                                    .anyMatch(
                                            until ->
                                                    until.isAfter(firstLeaseEnd.plusSeconds(1))
                                                            && until.isBefore(
                                                                    storeClock
                                                                            .instant()
                                                                            .plus(LEASE)
                                                                            .plusSeconds(1))));
            Instant pastTheFirstLease = firstLeaseEnd.plusMillis(500);
            if (storeClock.instant().isAfter(pastTheFirstLease)) {
                pastTheFirstLease = storeClock.instant();
            }
            for (Duration later : List.of(Duration.ZERO, Duration.ofSeconds(1))) {
                assertThat(
                                store.claim(
                                        new ClaimRequest(
                                                "other",
                                                pastTheFirstLease.plus(later),
                                                LEASE,
                                                100)))
                        .as(
                                "at the store's clock + %s, over %s after the relay's claim, its"
                                        + " renewed leases still hold: a relay clock %d s off must"
                                        + " not shorten them",
                                later, LEASE, skewSeconds)
                        .isEmpty();
            }
            publisher.release.countDown();
            Fixtures.await(
                    "the relay publishes and completes both",
                    Duration.ofSeconds(10),
                    () -> store.size() == 0);
            assertThat(publisher.published).containsExactlyInAnyOrder("keyed", "unkeyed");
            assertThat(relay.membership()).isPresent();
        } finally {
            publisher.release.countDown();
            relay.close();
        }
    }
}
