package io.outbox4j.engine;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Observation;
import java.time.Duration;
import java.time.Instant;

/** One claimed delivery as it moves through a batch; confined to the batch's thread. */
final class Tracked {
    /** What the batch will write for this delivery. */
    enum Disposition {
        COMPLETE,
        RELEASE,
        DEAD_LETTER
    }

    final Delivery delivery;

    /** Position in the claim. */
    final int index;

    Duration duration = Duration.ZERO;

    /**
     * Why it was not published (the publisher's failure, a timeout, a held-back reason…), or null.
     */
    Throwable error;

    boolean publisherThrewError;

    Disposition disposition;

    /** For RELEASE: when it may be claimed again. */
    Instant availableAt;

    /** For DEAD_LETTER: the reason kept by the store. */
    String deadLetterReason;

    Observation.Outcome outcome;

    Tracked(Delivery delivery, int index) {
        this.delivery = delivery;
        this.index = index;
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
}
