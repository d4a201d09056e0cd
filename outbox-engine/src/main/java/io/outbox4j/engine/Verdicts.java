package io.outbox4j.engine;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.PublishOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongUnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What becomes of a failed delivery, and when it may be retried. */
final class Verdicts {
    private static final Logger LOG = LoggerFactory.getLogger(Verdicts.class);

    /**
     * The latest retry time the relay asks for. Later instants are legal in Java but not in most
     * databases; a delay that would reach past it is capped here.
     */
    static final Instant MAX_AVAILABLE_AT = Instant.parse("9999-12-31T23:59:59Z");

    private Verdicts() {}

    /**
     * A verdict: dead-letter with {@code reason}, or (when {@code reason} is null) retry at {@code
     * retryAt}.
     */
    record Verdict(@Nullable Instant retryAt, @Nullable String reason) {}

    /**
     * Decides, in this order: a permanent failure is dead-lettered; so is a message at its last
     * attempt; else it is retried after the {@code RetryAfter} delay if the failure carries one, or
     * after the backoff, plus a random 0–50 % spread.
     */
    static Verdict decide(
            PublishOutcome failure, int attempt, int maxAttempts, Backoff backoff, Instant now) {
        String error = describe(failure.failure().orElseThrow());
        if (failure.isPermanent()) {
            return new Verdict(null, "permanent failure: " + error);
        }
        if (attempt >= maxAttempts) {
            return new Verdict(null, "gave up after " + attempt + " attempts: " + error);
        }
        Duration floor = failure.retryAfter().orElseGet(() -> backoffDelay(backoff, attempt));
        return new Verdict(retryAt(now, spread(floor)), null);
    }

    /**
     * The backoff's delay after {@code attempt}, treating a missing or negative delay as none. A
     * backoff that throws must not strand the batch's leases: the default backoff stands in for it.
     */
    static Duration backoffDelay(Backoff backoff, int attempt) {
        Duration d;
        try {
            d = backoff.delay(attempt);
        } catch (RuntimeException e) {
            LOG.warn(
                    "backoff failed for attempt {}; using the default backoff: {}",
                    attempt,
                    e.toString());
            d = Backoff.DEFAULT.delay(attempt);
        }
        return d == null || d.isNegative() ? Duration.ZERO : d;
    }

    /** {@code now + delay}, capped at {@link #MAX_AVAILABLE_AT} instead of overflowing. */
    static Instant retryAt(Instant now, Duration delay) {
        if (!now.isBefore(MAX_AVAILABLE_AT)
                || delay.compareTo(Duration.between(now, MAX_AVAILABLE_AT)) >= 0) {
            return MAX_AVAILABLE_AT;
        }
        return now.plus(delay);
    }

    /** {@code delay} plus a uniformly random 0–50 % of it. */
    static Duration spread(Duration delay) {
        return spread(delay, bound -> ThreadLocalRandom.current().nextLong(bound));
    }

    /**
     * {@code delay} plus {@code randomBelow(half + 1)} nanoseconds, where {@code half} is half the
     * delay. The result is never below {@code delay}: a delay too big for nanoseconds (about 292
     * years) is returned as it is, and a sum that would overflow saturates.
     *
     * @param randomBelow given a positive bound, returns a value in {@code [0, bound)}
     */
    static Duration spread(Duration delay, LongUnaryOperator randomBelow) {
        if (delay.isNegative() || delay.isZero()) {
            return Duration.ZERO;
        }
        long nanos;
        try {
            nanos = delay.toNanos();
        } catch (ArithmeticException tooBig) {
            return delay;
        }
        long extra = randomBelow.applyAsLong(nanos / 2 + 1);
        if (nanos > Long.MAX_VALUE - extra) {
            return Duration.ofNanos(Long.MAX_VALUE);
        }
        return Duration.ofNanos(nanos + extra);
    }

    /** The error text kept by the store and shown in dead-letter reasons. */
    static String describe(Throwable error) {
        String text = error.toString();
        return text.isBlank() ? error.getClass().getName() : text;
    }
}
