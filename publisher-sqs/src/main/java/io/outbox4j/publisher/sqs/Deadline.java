package io.outbox4j.publisher.sqs;

import java.time.Duration;
import java.util.Optional;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;

/**
 * The end of one publish call, and the SDK timeouts of a request sent before it: the configured
 * API-call and attempt timeouts, each cut to the time left, so no request outlives the call.
 */
final class Deadline {
    private final Duration total;
    private final long endNanos;
    private final Duration apiCallTimeout;
    private final Duration attemptTimeout;

    Deadline(Duration total, Duration apiCallTimeout, Duration attemptTimeout) {
        this.total = total;
        this.endNanos = System.nanoTime() + Math.min(total.toNanos(), Long.MAX_VALUE / 4);
        this.apiCallTimeout = apiCallTimeout;
        this.attemptTimeout = attemptTimeout;
    }

    Duration total() {
        return total;
    }

    /** The time left, zero once passed. */
    Duration remaining() {
        return Duration.ofNanos(Math.max(0, endNanos - System.nanoTime()));
    }

    /** The overrides for a request sent now; empty when the deadline has passed. */
    Optional<AwsRequestOverrideConfiguration> requestTimeouts() {
        Duration left = remaining().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        if (left.isZero()) {
            return Optional.empty();
        }
        Duration call = min(apiCallTimeout, left);
        return Optional.of(
                AwsRequestOverrideConfiguration.builder()
                        .apiCallTimeout(call)
                        .apiCallAttemptTimeout(min(attemptTimeout, call))
                        .build());
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
