package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Observation;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Release;
import io.outbox4j.api.RetryAfterException;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Verdict precedence: permanent → exhausted → retry-after → backoff; the 0–50 % spread and its
 * overflow guards.
 */
class VerdictTest extends RelayRig {
    private static final Backoff ONE_MINUTE = Backoff.fixed(Duration.ofMinutes(1));

    /**
     * Enqueues one message, m1, and builds a relay over it whose publisher fails every message with
     * {@code failure}.
     */
    private Relay relayFailingM1(Supplier<Throwable> failure, int maxAttempts, Backoff backoff) {
        enqueue(Fixtures.message("m1"));
        return Relay.builder(
                        store,
                        new Fixtures.ScriptedPublisher(m -> PublishOutcome.failed(failure.get())))
                .clock(clock)
                .observer(observer)
                .maxAttempts(maxAttempts)
                .backoff(backoff)
                .build();
    }

    @Test
    void permanentFailure_isDeadLettered_evenWhenItCarriesARetryAfter() {
        try (Relay relay =
                relayFailingM1(
                        () ->
                                new PermanentFailureException(
                                        "record too large",
                                        new RetryAfterException(
                                                "throttled", Duration.ofHours(1), null)),
                        8,
                        ONE_MINUTE)) {
            Relay.Result result = relay.runOnce();
            assertThat(result).isEqualTo(new Relay.Result(1, 0, 0, 0, 1, 0));
        }
        assertThat(store.releases).isEmpty();
        assertThat(memory.deadLetterReason("m1"))
                .hasValueSatisfying(
                        reason ->
                                assertThat(reason)
                                        .startsWith("permanent failure: ")
                                        .contains("record too large"));
        assertThat(observer.outcomes()).containsExactly(Observation.Outcome.DEAD_LETTERED);
    }

    @Test
    void exhaustedAttempts_areDeadLettered_beforeARetryAfterIsHonoured() {
        try (Relay relay =
                relayFailingM1(
                        () -> new RetryAfterException("throttled", Duration.ofHours(1), null),
                        2,
                        ONE_MINUTE)) {
            assertThat(relay.runOnce().released()).as("attempt 1 of 2 is retried").isEqualTo(1);
            clock.advance(Duration.ofHours(2));
            assertThat(relay.runOnce().deadLettered())
                    .as("attempt 2 of 2 is the last")
                    .isEqualTo(1);
        }
        assertThat(memory.deadLetterReason("m1"))
                .hasValue(
                        "gave up after 2 attempts: io.outbox4j.api.RetryAfterException: throttled");
        assertThat(observer.outcomes())
                .containsExactly(Observation.Outcome.RELEASED, Observation.Outcome.DEAD_LETTERED);
    }

    @Test
    void maxAttemptsOne_deadLettersTheFirstFailure() {
        try (Relay relay =
                relayFailingM1(() -> new IllegalStateException("broker down"), 1, ONE_MINUTE)) {
            assertThat(relay.runOnce().deadLettered()).isEqualTo(1);
        }
        assertThat(memory.deadLetterReason("m1"))
                .hasValue("gave up after 1 attempt: java.lang.IllegalStateException: broker down");
    }

    @Test
    void issue29_deadLetterReason_neverPromisesARetry_andNamesTheTransportsCause() {
        try (Relay relay =
                relayFailingM1(
                        () ->
                                new RetryableFailureException(
                                        "message 'm1' was not acknowledged by Kafka for topic"
                                                + " 'orders' within 3s; it may still arrive, and"
                                                + " will be retried",
                                        new java.net.ConnectException(
                                                "Connection refused: 127.0.0.1:9092")),
                        1,
                        ONE_MINUTE)) {
            assertThat(relay.runOnce().deadLettered()).isEqualTo(1);
        }
        assertThat(memory.deadLetterReason("m1"))
                .hasValue(
                        "gave up after 1 attempt: io.outbox4j.api.RetryableFailureException:"
                                + " message 'm1' was not acknowledged by Kafka for topic 'orders'"
                                + " within 3s; it may still have arrived (cause:"
                                + " java.net.ConnectException: Connection refused:"
                                + " 127.0.0.1:9092)");
    }

    @Test
    void explain_dropsEveryFormOfRetryPromise_keepsTheRest() {
        assertThat(
                        Verdicts.withoutRetryPromise(
                                "the RabbitMQ publisher is closed; the message will be retried"))
                .isEqualTo("the RabbitMQ publisher is closed");
        assertThat(Verdicts.withoutRetryPromise("no queue is bound for it; it will be retried"))
                .isEqualTo("no queue is bound for it");
        assertThat(Verdicts.withoutRetryPromise("throttled; the message(s) will be retried"))
                .isEqualTo("throttled");
        assertThat(Verdicts.withoutRetryPromise("broker down")).isEqualTo("broker down");
        assertThat(
                        Verdicts.explain(
                                new RetryableFailureException(
                                        "Kafka did not take message 'm1': NetworkException:"
                                                + " disconnected; it will be retried",
                                        new IllegalStateException("disconnected"))))
                .as("a root cause the text already names is not repeated")
                .isEqualTo(
                        "io.outbox4j.api.RetryableFailureException: Kafka did not take message"
                                + " 'm1': NetworkException: disconnected");
    }

    @Test
    void retryAfter_takesPrecedenceOverTheBackoff_asAFloorWithUpToHalfMore() {
        Instant now = clock.instant();
        try (Relay relay =
                relayFailingM1(
                        () ->
                                new IllegalStateException(
                                        "wrapped",
                                        new RetryAfterException(
                                                "throttled", Duration.ofHours(1), null)),
                        8,
                        ONE_MINUTE)) {
            relay.runOnce();
        }
        Release release = store.releases.get(0);
        assertThat(release.availableAt())
                .isBetween(now.plus(Duration.ofHours(1)), now.plus(Duration.ofMinutes(90)));
        assertThat(release.error()).contains("wrapped");
    }

    @Test
    void otherwise_theBackoffOfTheFailedAttempt_isTheFloor() {
        Instant start = clock.instant();
        try (Relay relay =
                relayFailingM1(
                        () -> new IllegalStateException("broker down"),
                        8,
                        attempt -> Duration.ofMinutes(attempt))) {
            relay.runOnce();
            clock.advance(Duration.ofMinutes(2));
            relay.runOnce();
        }
        assertThat(store.releases.get(0).availableAt())
                .as("attempt 1: 1m..1.5m")
                .isBetween(start.plus(Duration.ofMinutes(1)), start.plus(Duration.ofSeconds(90)));
        Instant second = start.plus(Duration.ofMinutes(2));
        assertThat(store.releases.get(1).availableAt())
                .as("attempt 2: 2m..3m")
                .isBetween(second.plus(Duration.ofMinutes(2)), second.plus(Duration.ofMinutes(3)));
    }

    @Test
    void aHugeRetryAfter_isCappedInsteadOfOverflowingTheRetryTime() {
        try (Relay relay =
                relayFailingM1(
                        () ->
                                new RetryAfterException(
                                        "never", Duration.ofSeconds(Long.MAX_VALUE), null),
                        8,
                        ONE_MINUTE)) {
            assertThat(relay.runOnce().released()).isEqualTo(1);
        }
        assertThat(store.releases.get(0).availableAt()).isEqualTo(Verdicts.MAX_AVAILABLE_AT);
        assertThat(Verdicts.retryAt(Instant.MAX, Duration.ofSeconds(1)))
                .isEqualTo(Verdicts.MAX_AVAILABLE_AT);
        assertThat(Verdicts.retryAt(clock.instant(), Duration.ofDays(1)))
                .isEqualTo(clock.instant().plus(Duration.ofDays(1)));
    }

    @Test
    void spread_addsZeroToFiftyPercent_neverLess() {
        Duration d = Duration.ofSeconds(10);
        assertThat(Verdicts.spread(d, bound -> 0)).isEqualTo(d);
        assertThat(Verdicts.spread(d, bound -> bound - 1)).isEqualTo(Duration.ofSeconds(15));
        Duration min = Duration.ofDays(1);
        Duration max = Duration.ZERO;
        for (int i = 0; i < 10_000; i++) {
            Duration s = Verdicts.spread(d);
            assertThat(s).isBetween(d, Duration.ofSeconds(15));
            min = s.compareTo(min) < 0 ? s : min;
            max = s.compareTo(max) > 0 ? s : max;
        }
        assertThat(min)
                .as("the spread reaches down near 0 %")
                .isLessThan(Duration.ofMillis(10_500));
        assertThat(max)
                .as("the spread reaches up near 50 %")
                .isGreaterThan(Duration.ofMillis(14_500));
    }

    @Test
    void spread_ofHugeDelays_saturatesInsteadOfOverflowing() {
        Duration nearMax = Duration.ofNanos(Long.MAX_VALUE - 1);
        assertThat(Verdicts.spread(nearMax, bound -> bound - 1))
                .isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
        Duration beyondNanos = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
        assertThat(Verdicts.spread(beyondNanos)).isEqualTo(beyondNanos);
        assertThat(Verdicts.spread(Duration.ZERO)).isEqualTo(Duration.ZERO);
        assertThat(Verdicts.spread(Duration.ofSeconds(-5)))
                .as("a negative delay is no delay")
                .isEqualTo(Duration.ZERO);
    }

    @Test
    void aBackoffReturningNullOrNegative_meansNoDelay_andOneThatThrows_theDefault() {
        assertThat(Verdicts.backoffDelay(attempt -> null, 1)).isEqualTo(Duration.ZERO);
        assertThat(Verdicts.backoffDelay(attempt -> Duration.ofSeconds(-1), 1))
                .isEqualTo(Duration.ZERO);
        assertThat(
                        Verdicts.backoffDelay(
                                attempt -> {
                                    throw new IllegalStateException("bug in a custom backoff");
                                },
                                3))
                .as("the default stands in")
                .isEqualTo(Backoff.DEFAULT.delay(3));
    }
}
