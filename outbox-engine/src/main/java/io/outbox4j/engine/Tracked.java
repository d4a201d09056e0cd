package io.outbox4j.engine;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Observation;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/** One claimed delivery as it moves through a batch; confined to the batch's thread. */
final class Tracked {
    /** What the batch will write for this delivery. */
    enum Disposition {
        /** Published: complete it. */
        COMPLETE,
        /** Handed to the publisher and failed: release it for a retry (the attempt counts). */
        RELEASE,
        /** Handed to the publisher and given up. */
        DEAD_LETTER,
        /** Never handed to the publisher: give it back untried. */
        ABANDON,
        /** Its lease was found lost before it was handed over: nothing to write. */
        LOST
    }

    final Delivery delivery;

    /** Position in the claim. */
    final int index;

    /** The lane it belongs to (set by {@link Lanes#plan} before anything reads it). */
    @SuppressWarnings("NullAway.Init")
    Lanes.Lane lane;

    /** Whether it was handed to the publisher (a real try). */
    boolean handed;

    /** Whether a renewal reported its lease stale. */
    boolean lost;

    Duration duration = Duration.ZERO;

    /**
     * Why it was not published (the publisher's failure, a timeout, a held-back reason…), or null.
     */
    @Nullable Throwable error;

    boolean publisherThrewError;

    @Nullable Disposition disposition;

    /** For RELEASE: when it may be claimed again. */
    @Nullable Instant availableAt;

    /** For DEAD_LETTER: the reason kept by the store. */
    @Nullable String deadLetterReason;

    Observation.@Nullable Outcome outcome;

    Tracked(Delivery delivery, int index) {
        this.delivery = delivery;
        this.index = index;
    }

    String receipt() {
        return delivery.receipt();
    }

    boolean decided() {
        return disposition != null;
    }

    void complete(Duration took) {
        duration = took;
        disposition = Disposition.COMPLETE;
    }

    void release(Instant at, Throwable why) {
        disposition = Disposition.RELEASE;
        availableAt = at;
        error = why;
    }

    void deadLetter(String reason, Throwable why) {
        disposition = Disposition.DEAD_LETTER;
        deadLetterReason = reason;
        error = why;
    }

    /** Gives it back untried, or marks it lost if a renewal said its lease is gone. */
    void abandon(Throwable why) {
        disposition = lost ? Disposition.LOST : Disposition.ABANDON;
        error = why;
    }
}
