package io.outbox4j.engine;

import io.outbox4j.api.Membership;
import io.outbox4j.api.OutboxMembership;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a started relay a member of its outbox (docs/scale-out.md): renews the membership every
 * third of the member lease on a daemon thread of its own, wakes the loop up when the renewal
 * handed it buckets, and leaves the outbox when the relay closes, so its buckets move to the other
 * members at once. While it runs, the relay's claims are made {@linkplain
 * io.outbox4j.api.ClaimRequest#member() as a member}; a relay that was never started (only {@link
 * Relay#runOnce()}) claims every bucket, as before.
 *
 * <p>A failed renewal is logged and retried after a fifteenth of the lease; the claims stay member
 * claims, so a relay cut off from its store cannot claim buckets it lost: the store judges its
 * membership by its own clock.
 */
final class Members {
    private static final Logger LOG = LoggerFactory.getLogger(Members.class);

    /** A store clock this far from the relay's is logged at the first renewal. */
    private static final Duration NOTABLE_OFFSET = Duration.ofSeconds(1);

    private final @Nullable OutboxMembership store;
    private final String owner;
    private final Duration lease;
    private final StoreClock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition stopping = lock.newCondition();
    private volatile boolean active;
    private volatile @Nullable Membership last;
    private volatile long handovers;
    private boolean stopped;
    private @Nullable Thread thread;

    /**
     * @param store the store's membership port, or null when the store has none (or membership is
     *     turned off): every claim then takes every bucket
     * @param clock the relay's clock in the store's frame, moved at every renewal
     */
    Members(@Nullable OutboxMembership store, String owner, Duration lease, StoreClock clock) {
        this.store = store;
        this.owner = owner;
        this.lease = lease;
        this.clock = clock;
    }

    /** Whether claims are made as a member now. */
    boolean active() {
        return active;
    }

    /**
     * For the claim loop, before each claim: a member claims only once a renewal succeeded, so that
     * its clock is in the store's frame ({@link StoreClock}) before it times a lease. Until then
     * the loop renews itself, and a failed renewal fails the claim (the loop counts a store
     * failure, as for a failed claim).
     *
     * @throws RuntimeException what the store threw
     */
    void joinBeforeClaim() {
        OutboxMembership m = store;
        if (m != null && active && last == null) {
            renewOnce(m, () -> {});
        }
    }

    /** The last successful renewal, or null. */
    @Nullable Membership last() {
        return last;
    }

    /** The buckets handed over (to or from anyone) in this relay's renewals so far. */
    long handovers() {
        return handovers;
    }

    /** The member lease. */
    Duration lease() {
        return lease;
    }

    /**
     * Starts joining and renewing on the member thread: the first renewal runs at once there (never
     * on the caller's thread, which a store that cannot be reached would hold up), and wakes the
     * loop up when it succeeded and whenever a renewal changes the buckets; the loop claims nothing
     * before a renewal succeeded ({@link #joinBeforeClaim()}).
     *
     * @param wakeUp called when a renewal changed the buckets this relay owns
     */
    void start(Runnable wakeUp) {
        OutboxMembership m = store;
        if (m == null) {
            return;
        }
        lock.lock();
        try {
            if (thread != null || stopped) {
                return;
            }
            active = true;
            Thread t = new Thread(() -> loop(m, wakeUp), "outbox4j-member-" + owner);
            t.setDaemon(true);
            thread = t;
            t.start();
        } finally {
            lock.unlock();
        }
    }

    /** Stops renewing and leaves the outbox; idempotent. */
    void leave() {
        OutboxMembership m = store;
        Thread t;
        lock.lock();
        try {
            if (stopped) {
                return;
            }
            stopped = true;
            t = thread;
            stopping.signalAll();
        } finally {
            lock.unlock();
        }
        if (m == null || t == null) {
            return;
        }
        try {
            t.join(lease.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            m.leave(owner);
            LOG.info("relay '{}' left the outbox; its buckets went to the other members", owner);
        } catch (RuntimeException e) {
            LOG.warn(
                    "relay '{}' could not leave the outbox ({}); its buckets move when its member"
                            + " lease of {} ends",
                    owner,
                    e.toString(),
                    Durations.format(lease));
        }
    }

    private void loop(OutboxMembership m, Runnable wakeUp) {
        long every = lease.toNanos() / 3;
        long retry = Math.max(1, lease.toNanos() / 15);
        long wait = renew(m, wakeUp) ? every : retry;
        while (true) {
            lock.lock();
            try {
                long left = wait;
                while (!stopped && left > 0) {
                    left = stopping.awaitNanos(left);
                }
                if (stopped) {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            } finally {
                lock.unlock();
            }
            wait = renew(m, wakeUp) ? every : retry;
        }
    }

    /** One renewal on the member thread; returns whether it succeeded (a failure is logged). */
    private boolean renew(OutboxMembership m, Runnable wakeUp) {
        try {
            renewOnce(m, wakeUp);
            return true;
        } catch (RuntimeException e) {
            LOG.warn(
                    "relay '{}' could not renew its membership ({}); retrying in {}",
                    owner,
                    e.toString(),
                    Durations.format(Duration.ofNanos(lease.toNanos() / 15)));
            return false;
        }
    }

    /**
     * One renewal (on the member thread, or on the loop's before its first claim): moves the clock
     * into the store's frame, records the membership, and wakes the loop up when its buckets
     * changed or it is the first.
     */
    private synchronized void renewOnce(OutboxMembership m, Runnable wakeUp) {
        Membership before = last;
        Instant sent = clock.base().instant();
        Membership now = m.renew(owner, lease);
        clock.sync(sent, now.storeTime(), clock.base().instant());
        last = now;
        handovers += now.handedOver();
        if (before == null) {
            Duration offset = clock.offset();
            if (offset.abs().compareTo(NOTABLE_OFFSET) > 0) {
                LOG.warn(
                        "relay '{}': the store's clock is {} {} this relay's; the relay times its"
                                + " leases by the store's clock",
                        owner,
                        Durations.format(offset.abs()),
                        offset.isNegative() ? "behind" : "ahead of");
            }
        }
        List<Integer> had = before == null ? List.of() : before.buckets();
        boolean moved = !now.buckets().equals(had);
        if (moved) {
            LOG.info(
                    "relay '{}' owns {} of the outbox's buckets among {} members",
                    owner,
                    now.buckets().size(),
                    now.members().size());
        }
        if (moved || before == null) { // the loop waits for the first renewal to claim
            wakeUp.run();
        }
    }
}
