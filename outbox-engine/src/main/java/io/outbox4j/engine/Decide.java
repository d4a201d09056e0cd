package io.outbox4j.engine;

import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Decides what becomes of each delivery once the publisher answered (or could not be asked):
 * published deliveries are completed; a failed one gets its {@link Verdicts verdict} (release for a
 * retry, or dead letter), and the rest of its lane — the later messages of its key in this batch,
 * never handed to the publisher — is abandoned, so the store keeps them behind it. Confined to the
 * batch's thread.
 */
final class Decide {
    private final Settings settings;
    private final RelayLog log;
    private @Nullable Error publisherError;

    Decide(Settings settings, RelayLog log) {
        this.settings = settings;
        this.log = log;
    }

    /** The first Error a publisher threw in this batch (others are suppressed into it), or null. */
    @Nullable Error publisherError() {
        return publisherError;
    }

    /** The publisher's answer for one call: one outcome per head, in order. */
    void answered(List<Tracked> heads, List<PublishOutcome> outcomes, Duration took) {
        for (int i = 0; i < heads.size(); i++) {
            Tracked t = heads.get(i);
            PublishOutcome outcome = outcomes.get(i);
            t.lane.advance();
            if (outcome != null && outcome.isPublished()) {
                t.complete(took);
            } else {
                t.duration = took;
                fail(
                        t,
                        outcome != null
                                ? outcome
                                : PublishOutcome.failed(
                                        new RetryableFailureException(
                                                "publisher returned no outcome for this message")));
            }
        }
    }

    /**
     * The whole call failed (it threw, timed out or answered with the wrong number of outcomes).
     */
    void failedAll(List<Tracked> heads, Throwable cause, Duration took) {
        PublishOutcome failed = PublishOutcome.failed(cause);
        for (Tracked t : heads) {
            t.duration = took;
            t.lane.advance();
            fail(t, failed);
        }
    }

    /**
     * The call was cancelled (interrupt or shutdown) before it answered: its messages were handed
     * over, so each is released for an immediate retry and the attempt counts.
     */
    void cancelled(List<Tracked> heads, Throwable why, Duration took) {
        Instant now = settings.clock().instant();
        for (Tracked t : heads) {
            t.duration = took;
            t.lane.advance();
            t.release(now, why);
            holdBack(t.lane);
        }
    }

    /**
     * An Error from the publisher: the call's deliveries are released after the backoff, no further
     * call starts, the Error is rethrown once the batch is recorded.
     */
    void threw(List<Tracked> heads, Error error, Duration took) {
        if (publisherError == null) {
            publisherError = error;
        } else if (publisherError != error) {
            publisherError.addSuppressed(error);
        }
        Instant now = settings.clock().instant();
        for (Tracked t : heads) {
            t.lane.advance();
            Instant at =
                    Verdicts.retryAt(
                            now,
                            Verdicts.spread(
                                    Verdicts.backoffDelay(
                                            settings.backoff(), t.delivery.attempt())));
            t.duration = took;
            t.publisherThrewError = true;
            t.release(at, error);
            settings.publishing().retrying(at);
            log.publishFailed(t.delivery.message().topic(), Verdicts.explain(error), at, now);
            holdBack(t.lane);
        }
    }

    /** Gives back, untried, what is left of a lane. */
    static void abandonRest(Lanes.Lane lane, Throwable why) {
        for (Tracked t : lane.takeRest()) {
            if (!t.decided() && !t.handed) {
                t.abandon(why);
            }
        }
    }

    /** The verdict for one failed head; the rest of its lane is held back behind it. */
    private void fail(Tracked t, PublishOutcome failure) {
        Instant now = settings.clock().instant();
        Throwable cause = failure.failure().orElseThrow();
        Verdicts.Verdict verdict =
                Verdicts.decide(
                        failure,
                        t.delivery.attempt(),
                        settings.maxAttempts(),
                        settings.backoff(),
                        now);
        String reason = verdict.reason();
        Instant retryAt = verdict.retryAt();
        if (reason != null) {
            t.deadLetter(reason, cause);
        } else {
            t.release(Objects.requireNonNull(retryAt, "retryAt"), cause);
            settings.publishing().retrying(retryAt);
        }
        log.publishFailed(
                t.delivery.message().topic(),
                Verdicts.explain(cause),
                reason != null ? null : retryAt,
                now);
        holdBack(t.lane);
    }

    private static void holdBack(Lanes.Lane lane) {
        abandonRest(
                lane,
                new RetryableFailureException(
                        "held back: an earlier message with the same key was not published in"
                                + " this batch; given back untried, the store keeps it behind"
                                + " that message"));
    }
}
