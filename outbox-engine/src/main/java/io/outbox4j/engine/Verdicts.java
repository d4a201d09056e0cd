package io.outbox4j.engine;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.PublishOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
        Throwable cause = failure.failure().orElseThrow();
        if (failure.isPermanent()) {
            return new Verdict(null, "permanent failure: " + explain(cause));
        }
        if (attempt >= maxAttempts) {
            return new Verdict(
                    null,
                    "gave up after "
                            + attempt
                            + (attempt == 1 ? " attempt: " : " attempts: ")
                            + explain(cause));
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

    /** The error text kept by the store with a release. */
    static String describe(Throwable error) {
        String text = error.toString();
        return text.isBlank() ? error.getClass().getName() : text;
    }

    /**
     * A retry promise some publishers append to their failures ("; it will be retried"): the relay
     * decides about retries, and a dead letter's reason must not promise one.
     */
    private static final Pattern RETRY_PROMISE =
            Pattern.compile(
                    "(?:[;,]\\s*|\\s+)(?:and\\s+)?(?:it|the message(?:\\(s\\))?)?\\s*(?:may still"
                            + " arrive,?\\s+and\\s+)?will be retried",
                    Pattern.CASE_INSENSITIVE);

    /**
     * The failure as a dead letter's reason and a failure summary show it: its text without a
     * publisher's retry promise ("it may still arrive" stays), followed by its root cause when that
     * has a message the text does not already say (the transport's own error: connection refused,
     * unknown topic…).
     */
    static String explain(Throwable error) {
        String text = withoutRetryPromise(describe(error));
        Throwable root = error;
        for (int depth = 0; root.getCause() != null && depth < 32; depth++) {
            root = root.getCause();
        }
        if (root == error) {
            return text;
        }
        String rootMessage = root.getMessage();
        if (rootMessage == null || rootMessage.isBlank() || text.contains(rootMessage.strip())) {
            return text; // a root cause without words of its own adds nothing
        }
        return text + " (cause: " + withoutRetryPromise(describe(root)) + ")";
    }

    static String withoutRetryPromise(String text) {
        Matcher m = RETRY_PROMISE.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            boolean mayArrive = m.group().toLowerCase(Locale.ROOT).contains("may still arrive");
            m.appendReplacement(out, mayArrive ? "; it may still have arrived" : "");
        }
        m.appendTail(out);
        return out.toString();
    }
}
