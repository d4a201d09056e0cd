package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.errorprone.annotations.FormatMethod;
import com.google.errorprone.annotations.FormatString;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of every rule group of the store and admin kits: before each rule it empties the storage and
 * starts the kit's clock ({@link KitClock}, the fixture the kit instance hands its groups), and it
 * holds the helpers both kits use. A rule group is a package-private top-level class; the kit
 * extends it in a small {@code @Nested} inner class, so JUnit runs its inherited rules there.
 */
abstract class KitRules {
    /** The lease every rule claims with, unless it says otherwise. */
    static final Duration LEASE = Duration.ofMinutes(5);

    /** The kit's clock and test data, one per kit instance. */
    final KitClock clock;

    KitRules(KitClock clock) {
        this.clock = clock;
    }

    /** The kit's {@code store()}. */
    abstract OutboxStore store();

    /** The kit's {@code resetStore()}. */
    abstract void resetStore();

    /** The kit's {@code enqueueCommitted(messages)}. */
    abstract void enqueueCommitted(List<Message> messages);

    /** The kit's {@code clockSkewTolerance()}. */
    abstract Duration clockSkewTolerance();

    /** A message of the kit's test data with the given ordering key. */
    abstract Message keyed(String key);

    /** Two messages of one key, the head enqueued before the follower. */
    record SameKey(Message head, Message follower) {}

    @BeforeEach
    void resetStoreAndClock() {
        resetStore();
        clock.start();
    }

    /** Moves the kit's clock up to the wall clock plus the tolerance, never back. */
    Instant syncWithWallClock() {
        return clock.syncWithWallClock();
    }

    Instant now() {
        return clock.now();
    }

    Instant advance(Duration by) {
        return clock.advance(by);
    }

    Instant advanceTo(Instant to) {
        return clock.advanceTo(to);
    }

    /** A fresh ordering key of this rule. */
    String nextKey() {
        return clock.nextKey();
    }

    /**
     * Enqueues in one committed transaction, then lets the kit's clock catch up with the enqueue
     * time.
     */
    void committed(Message... messages) {
        committed(List.of(messages));
    }

    void committed(List<Message> messages) {
        enqueueCommitted(messages);
        syncWithWallClock();
    }

    /**
     * Enqueues two messages of a fresh key in one committed transaction, the head first, and lets
     * the kit's clock catch up.
     */
    SameKey committedHeadAndFollower() {
        String key = nextKey();
        SameKey k = new SameKey(keyed(key), keyed(key));
        committed(k.head(), k.follower());
        return k;
    }

    List<Delivery> claim(OutboxStore on, String owner, int limit) {
        return on.claim(new ClaimRequest(owner, now(), LEASE, limit));
    }

    List<Delivery> claimAll(OutboxStore on, String owner) {
        return claim(on, owner, ClaimRequest.MAX_LIMIT);
    }

    /**
     * Checks that {@code d} is attempt {@code expected}; the failure says why ({@code why}
     * formatted with {@code args}) and what the store reported.
     */
    @FormatMethod
    static void assertAttempt(Delivery d, int expected, @FormatString String why, Object... args) {
        assertThat(d.attempt())
                .as("%s, but your store reported %d", String.format(why, args), d.attempt())
                .isEqualTo(expected);
    }
}
