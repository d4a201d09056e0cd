package io.outbox4j.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.IdentityHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Whether the relay's publisher calls succeed, for {@link Relay#publishing()}: failed calls since
 * the last call that published something, when the first of them started, when the last retry of a
 * failed message is due, and the publisher calls in flight. Shared by the relay's batches.
 */
final class PublishTracker {
    private final Clock clock;

    /** A message released for a retry is claimed again within this of its retry time. */
    private final Duration reclaimSlack;

    private long failedCallsInARow;
    private @Nullable Instant lastPublished;
    private @Nullable Instant failingSince;
    private @Nullable Instant retriesDueBy;
    private final IdentityHashMap<Object, Instant> calls = new IdentityHashMap<>();

    PublishTracker(Clock clock, Duration pollInterval, Duration lease) {
        this.clock = clock;
        this.reclaimSlack = pollInterval.plus(lease);
    }

    /** A publisher call starts; {@code call} identifies it until {@link #ended}. */
    synchronized void started(Object call) {
        calls.put(call, clock.instant());
    }

    /**
     * A call answered, timed out or was cancelled.
     *
     * @param published whether the broker took at least one of its messages
     * @param failed whether it failed (every message not published); neither for a call cancelled
     *     by shutdown
     */
    synchronized void ended(Object call, boolean published, boolean failed) {
        Instant startedAt = calls.remove(call);
        if (published) {
            failedCallsInARow = 0;
            failingSince = null;
            lastPublished = clock.instant();
        } else if (failed) {
            failedCallsInARow++;
            if (failingSince == null) {
                failingSince = startedAt == null ? clock.instant() : startedAt;
            }
        }
    }

    /** A failed message was released for a retry at {@code retryAt}. */
    synchronized void retrying(Instant retryAt) {
        Instant due = Verdicts.retryAt(retryAt, reclaimSlack);
        if (retriesDueBy == null || due.isAfter(retriesDueBy)) {
            retriesDueBy = due;
        }
    }

    synchronized Relay.Publishing snapshot() {
        Instant oldest = null;
        for (Instant at : calls.values()) {
            if (oldest == null || at.isBefore(oldest)) {
                oldest = at;
            }
        }
        return new Relay.Publishing(
                failedCallsInARow, lastPublished, failingSince, retriesDueBy, calls.size(), oldest);
    }
}
