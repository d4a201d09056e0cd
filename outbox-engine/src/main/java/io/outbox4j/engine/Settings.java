package io.outbox4j.engine;

import io.outbox4j.api.Backoff;
import java.time.Clock;
import java.time.Duration;

/**
 * A relay's validated configuration (see {@link Relay.Builder}), with the values derived from it.
 *
 * @param batchSize the largest claim (and the claim of {@link Relay#runOnce()})
 * @param minBatchSize the smallest claim of the loop: where it starts and what it shrinks to
 * @param maxInFlight the most messages the loop holds at once (claimed and not yet recorded)
 * @param wakeUpWindow wake-ups that come within this time of the last claim's start are coalesced
 *     into one claim at its end
 * @param lease how long a claim or a renewal leases the messages
 * @param clockCheck the longest a batch waits without reading the relay's clock (to renew on time
 *     even when the clock jumps, or is moved by a test)
 * @param failureLogInterval the shortest time between two publish-failure summaries of one topic
 * @param minMessagesPerCall a batch is split into no more calls than it has this many messages
 *     ({@link #MIN_MESSAGES_PER_CALL}; tests set 1)
 * @param members the relay's membership of the outbox: whether its claims are member claims
 * @param publishing whether the relay's publisher calls succeed, for {@link Relay#publishing()}
 */
record Settings(
        String owner,
        int batchSize,
        int minBatchSize,
        int maxInFlight,
        Duration wakeUpWindow,
        int workers,
        Duration deliveryTimeout,
        int maxAttempts,
        Backoff backoff,
        Duration pollInterval,
        Clock clock,
        SafeObserver observer,
        Duration shutdownTimeout,
        Duration storeWriteTimeout,
        Duration lease,
        Duration clockCheck,
        Duration failureLogInterval,
        int minMessagesPerCall,
        Members members,
        PublishTracker publishing) {

    /**
     * The timeout a publisher call is given: the delivery timeout less a tenth of it (at most 1 s),
     * so that a publisher that honours it answers with its own reason (the broker's error) before
     * the relay cuts the call at the delivery timeout.
     */
    Duration publisherTimeout() {
        long nanos = deliveryTimeout.toNanos();
        return Duration.ofNanos(nanos - Math.min(nanos / 10, 1_000_000_000L));
    }

    /** Renewals are due every third of the lease. */
    Duration renewEvery() {
        return thirdOfLease();
    }

    /**
     * A lease counts as proven only while more than this is left of it: one missed renewal is
     * tolerated, a second one stops the hand-over of further messages.
     */
    Duration renewalMargin() {
        return thirdOfLease();
    }

    /** A third of the lease (in nanoseconds: Duration.dividedBy goes through BigDecimal). */
    private Duration thirdOfLease() {
        return Duration.ofNanos(lease.toNanos() / 3);
    }

    /** After a failed renewal, the next try comes this much later. */
    Duration renewalRetry() {
        return Duration.ofNanos(lease.toNanos() / 15);
    }

    /**
     * A batch is split into no more publisher calls than it has this many messages: a small batch
     * is one call, which an adapter pipelines (one flush, one round of confirms).
     */
    static final int MIN_MESSAGES_PER_CALL = 8;

    /** Each outcome write gets this long, whatever the caller's state. */
    static final Duration STORE_WRITE_TIMEOUT = Duration.ofSeconds(5);

    /** The longest pause after repeated store failures (unless the poll interval is longer). */
    static final Duration MAX_ERROR_PAUSE = Duration.ofSeconds(30);

    /** The longest a running batch goes without reading the relay's clock. */
    static final Duration CLOCK_CHECK = Duration.ofSeconds(1);

    /**
     * The safety limit on a batch of {@code claimed} messages: no publisher call starts later than
     * this after the claim.
     */
    Duration maxBatchDuration(int claimed) {
        return maxBatchDuration(claimed, workers, deliveryTimeout);
    }

    /**
     * The safety limit on one batch: {@code (ceil(batch / workers) + 1) × timeout} — the time the
     * batch's publisher calls take when they run to their deadline one round after the other — in
     * 64-bit arithmetic, capped at {@link Relay#MAX_BATCH_DURATION} instead of overflowing.
     */
    static Duration maxBatchDuration(int batch, int workers, Duration timeout) {
        long rounds = ((long) batch + workers - 1) / workers + 1;
        try {
            Duration d = Duration.ofNanos(Math.multiplyExact(rounds, timeout.toNanos()));
            return d.compareTo(Relay.MAX_BATCH_DURATION) > 0 ? Relay.MAX_BATCH_DURATION : d;
        } catch (ArithmeticException overflow) {
            return Relay.MAX_BATCH_DURATION;
        }
    }
}
