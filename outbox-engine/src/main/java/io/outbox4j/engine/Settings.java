package io.outbox4j.engine;

import io.outbox4j.api.Backoff;
import java.time.Clock;
import java.time.Duration;

/**
 * A relay's validated configuration (see {@link Relay.Builder}), with the values derived from it.
 *
 * @param lease how long a claim or a renewal leases the messages
 * @param maxBatchDuration the safety limit on one batch: no publisher call starts later than this
 *     after the claim
 * @param clockCheck the longest a batch waits without reading the relay's clock (to renew on time
 *     even when the clock jumps, or is moved by a test)
 * @param failureLogInterval the shortest time between two publish-failure summaries of one topic
 */
record Settings(
        String owner,
        int batchSize,
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
        Duration maxBatchDuration,
        Duration clockCheck,
        Duration failureLogInterval) {

    /** Renewals are due every third of the lease. */
    Duration renewEvery() {
        return lease.dividedBy(3);
    }

    /**
     * A lease counts as proven only while more than this is left of it: one missed renewal is
     * tolerated, a second one stops the hand-over of further messages.
     */
    Duration renewalMargin() {
        return lease.dividedBy(3);
    }

    /** After a failed renewal, the next try comes this much later. */
    Duration renewalRetry() {
        return lease.dividedBy(15);
    }
}
