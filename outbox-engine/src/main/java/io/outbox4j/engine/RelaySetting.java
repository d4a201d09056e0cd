package io.outbox4j.engine;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Incubating;
import io.outbox4j.api.OutboxMembership;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The one definition of each relay setting: its name, default, bounds and meaning. {@link
 * Relay.Builder} checks its values against these; the standalone relay's file and environment
 * ({@code relay.<key>}, {@code OUTBOX4J_RELAY_<KEY>}), the Spring Boot properties ({@code
 * outbox4j.relay.<key>}), the Kafka Connect connector's configuration and the CLI's help take their
 * bounds, defaults and text from here, or are checked against it by their tests (docs/relay.md,
 * "Settings").
 *
 * <p>Settings whose default is derived from another one (the smallest claim, the bound on messages
 * in flight, the owner) have no {@link #defaultValue()}; {@link #defaultText()} says how it is
 * derived.
 *
 * @param <T> the value's type: {@link Integer}, {@link Duration}, {@link Boolean} or {@link String}
 */
@Incubating
public final class RelaySetting<T extends Comparable<T>> {
    /** The relay's name in leases, membership and logs. */
    public static final RelaySetting<String> OWNER =
            new RelaySetting<>(
                    "owner",
                    String.class,
                    null,
                    "host name, process id and a random suffix",
                    null,
                    null,
                    "the relay's name in leases, membership and logs (1 to 255 characters, no"
                            + " control characters)");

    /** The largest claim. */
    public static final RelaySetting<Integer> BATCH_SIZE =
            integer(
                    "batchSize",
                    Relay.DEFAULT_BATCH_SIZE,
                    1,
                    ClaimRequest.MAX_LIMIT,
                    "the largest claim; the loop starts at minBatchSize and doubles while its"
                            + " claims come back full");

    /** The smallest claim of the loop. */
    public static final RelaySetting<Integer> MIN_BATCH_SIZE =
            new RelaySetting<>(
                    "minBatchSize",
                    Integer.class,
                    null,
                    Relay.DEFAULT_MIN_BATCH_SIZE + ", or batchSize if smaller",
                    1,
                    ClaimRequest.MAX_LIMIT,
                    "the loop's first and smallest claim (at most batchSize)");

    /** The most messages the loop holds at once. */
    public static final RelaySetting<Integer> MAX_IN_FLIGHT =
            new RelaySetting<>(
                    "maxInFlight",
                    Integer.class,
                    null,
                    Relay.DEFAULT_IN_FLIGHT_BATCHES + " × batchSize",
                    1,
                    1_000_000,
                    "the most messages claimed and not yet recorded (at least batchSize)");

    /** Wake-ups within this time of a claim's start are served by one claim at its end. */
    public static final RelaySetting<Duration> WAKE_UP_WINDOW =
            duration(
                    "wakeUpWindow",
                    Relay.DEFAULT_WAKE_UP_WINDOW,
                    Duration.ZERO,
                    Relay.MAX_WAKE_UP_WINDOW,
                    "wake-ups within this time of a claim's start are served by one claim at its"
                            + " end");

    /** Publisher calls at a time. */
    public static final RelaySetting<Integer> WORKERS =
            integer(
                    "workers",
                    Relay.DEFAULT_WORKERS,
                    1,
                    1024,
                    "publisher calls at a time, across the batches in flight");

    /** The bound of one publisher call. */
    public static final RelaySetting<Duration> DELIVERY_TIMEOUT =
            duration(
                    "deliveryTimeout",
                    Relay.DEFAULT_DELIVERY_TIMEOUT,
                    Duration.ofMillis(1),
                    Duration.ofHours(1),
                    "how long one publisher call may take before it is cancelled and its messages"
                            + " retried");

    /** How long a claim or a renewal leases its messages. */
    public static final RelaySetting<Duration> LEASE =
            duration(
                    "lease",
                    Relay.DEFAULT_LEASE,
                    Relay.MIN_LEASE,
                    Relay.MAX_LEASE,
                    "how long a claim leases its messages, renewed every third of it; a crashed"
                            + " relay's messages are claimable again one lease after its last"
                            + " renewal");

    /** How long a relay's membership lasts without a renewal. */
    public static final RelaySetting<Duration> MEMBER_LEASE =
            duration(
                    "memberLease",
                    Relay.DEFAULT_MEMBER_LEASE,
                    OutboxMembership.MIN_LEASE,
                    OutboxMembership.MAX_LEASE,
                    "how long a relay's membership lasts without a renewal (by the store's clock);"
                            + " a crashed relay's buckets move within it plus one renewal");

    /** The attempt at which a message is dead-lettered. */
    public static final RelaySetting<Integer> MAX_ATTEMPTS =
            integer(
                    "maxAttempts",
                    Relay.DEFAULT_MAX_ATTEMPTS,
                    1,
                    Integer.MAX_VALUE,
                    "the attempt at which a failing message is dead-lettered");

    /** The first retry delay of the exponential backoff. */
    public static final RelaySetting<Duration> BACKOFF_BASE =
            duration(
                    "backoffBase",
                    Duration.ofSeconds(1),
                    Duration.ofMillis(1),
                    Duration.ofDays(1),
                    "the first retry delay; each further attempt doubles it (plus 0-50 % spread)");

    /** The longest retry delay of the exponential backoff. */
    public static final RelaySetting<Duration> BACKOFF_MAX =
            duration(
                    "backoffMax",
                    Duration.ofMinutes(10),
                    Duration.ofMillis(1),
                    Duration.ofDays(7),
                    "the longest retry delay (at least backoffBase)");

    /** The longest the loop waits after a partial or empty claim (adaptive polling below it). */
    public static final RelaySetting<Duration> POLL_INTERVAL =
            duration(
                    "pollInterval",
                    Relay.DEFAULT_POLL_INTERVAL,
                    Duration.ofMillis(1),
                    Duration.ofHours(1),
                    "the longest the loop waits after a partial or empty claim, unless woken up (10 ms"
                            + " after a claim that found messages, doubling up to this)");

    /** How long closing waits for the batches in flight. */
    public static final RelaySetting<Duration> SHUTDOWN_TIMEOUT =
            duration(
                    "shutdownTimeout",
                    Relay.DEFAULT_SHUTDOWN_TIMEOUT,
                    Duration.ZERO,
                    Duration.ofHours(1),
                    "how long closing waits for the batches in flight before it cancels them");

    /** Whether a started relay joins its outbox as a member. */
    public static final RelaySetting<Boolean> MEMBERSHIP =
            new RelaySetting<>(
                    "membership",
                    Boolean.class,
                    true,
                    "true",
                    null,
                    null,
                    "whether the relay joins its outbox as a member and claims keyed messages of"
                            + " its own buckets only (docs/scale-out.md)");

    /** How long publishing may be stalled before health reports it. */
    public static final RelaySetting<Duration> MAX_PUBLISH_STALL =
            duration(
                    "maxPublishStall",
                    Relay.DEFAULT_MAX_PUBLISH_STALL,
                    Duration.ofSeconds(1),
                    Duration.ofDays(1),
                    "how long publishing may be stalled (calls failing or hanging) before health"
                            + " turns DOWN");

    private static final List<RelaySetting<?>> ALL =
            List.of(
                    OWNER,
                    BATCH_SIZE,
                    MIN_BATCH_SIZE,
                    MAX_IN_FLIGHT,
                    WAKE_UP_WINDOW,
                    WORKERS,
                    DELIVERY_TIMEOUT,
                    LEASE,
                    MEMBER_LEASE,
                    MAX_ATTEMPTS,
                    BACKOFF_BASE,
                    BACKOFF_MAX,
                    POLL_INTERVAL,
                    SHUTDOWN_TIMEOUT,
                    MEMBERSHIP,
                    MAX_PUBLISH_STALL);

    private final String name;
    private final Class<T> type;
    private final @Nullable T defaultValue;
    private final String defaultText;
    private final @Nullable T min;
    private final @Nullable T max;
    private final String doc;

    private RelaySetting(
            String name,
            Class<T> type,
            @Nullable T defaultValue,
            String defaultText,
            @Nullable T min,
            @Nullable T max,
            String doc) {
        this.name = name;
        this.type = type;
        this.defaultValue = defaultValue;
        this.defaultText = defaultText;
        this.min = min;
        this.max = max;
        this.doc = doc;
    }

    private static RelaySetting<Integer> integer(
            String name, int defaultValue, int min, int max, String doc) {
        return new RelaySetting<>(
                name, Integer.class, defaultValue, String.valueOf(defaultValue), min, max, doc);
    }

    private static RelaySetting<Duration> duration(
            String name, Duration defaultValue, Duration min, Duration max, String doc) {
        return new RelaySetting<>(
                name, Duration.class, defaultValue, Durations.format(defaultValue), min, max, doc);
    }

    /**
     * Every relay setting, in the order of the docs.
     *
     * @return the settings
     */
    public static List<RelaySetting<?>> all() {
        return ALL;
    }

    /**
     * Returns the setting's name in Java: the {@link Relay.Builder} method.
     *
     * @return e.g. {@code batchSize}
     */
    public String name() {
        return name;
    }

    /**
     * Returns the setting's name in files, properties and command lines.
     *
     * @return e.g. {@code batch-size}
     */
    public String key() {
        return name.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
    }

    /**
     * Returns the setting's name in an environment variable, after a prefix such as {@code
     * OUTBOX4J_RELAY_}.
     *
     * @return e.g. {@code BATCH_SIZE}
     */
    public String envName() {
        return key().replace('-', '_').toUpperCase(Locale.ROOT);
    }

    /**
     * Returns the type of the setting's values.
     *
     * @return {@code Integer}, {@code Duration}, {@code Boolean} or {@code String}
     */
    public Class<T> type() {
        return type;
    }

    /**
     * Returns the default, when it is a fixed value.
     *
     * @return the default, or empty when it is derived ({@link #defaultText()} says how)
     */
    public Optional<T> defaultValue() {
        return Optional.ofNullable(defaultValue);
    }

    /**
     * Returns the default as the docs show it.
     *
     * @return e.g. {@code 500}, {@code 15s} or {@code 2 × batchSize}
     */
    public String defaultText() {
        return defaultText;
    }

    /**
     * Returns the smallest value allowed.
     *
     * @return the bound, or empty for settings without one (text and flags)
     */
    public Optional<T> min() {
        return Optional.ofNullable(min);
    }

    /**
     * Returns the largest value allowed.
     *
     * @return the bound, or empty for settings without one (text and flags)
     */
    public Optional<T> max() {
        return Optional.ofNullable(max);
    }

    /**
     * Returns what the setting means, one sentence without a final period.
     *
     * @return the description
     */
    public String doc() {
        return doc;
    }

    /**
     * Returns the bounds as the docs and messages show them.
     *
     * @return e.g. {@code between 1 and 10000}, or empty text for settings without bounds
     */
    public String bounds() {
        return min == null || max == null ? "" : "between " + text(min) + " and " + text(max);
    }

    /**
     * Returns a value as the docs and messages show it: durations as {@code 250ms}, {@code 30s},
     * {@code 2m30s}.
     *
     * @param value a value of this setting
     * @return its text
     */
    public String text(T value) {
        return value instanceof Duration d ? Durations.format(d) : String.valueOf(value);
    }

    /**
     * Says what is wrong with a value, without the setting's name, for a caller that names the
     * setting its own way (a property, a file key).
     *
     * @param value the value
     * @return {@code must be between 1 and 10000, but was 0}, or empty when the value is within the
     *     bounds
     */
    public Optional<String> problem(T value) {
        if ((min != null && value.compareTo(min) < 0)
                || (max != null && value.compareTo(max) > 0)) {
            return Optional.of("must be " + bounds() + ", but was " + text(value));
        }
        return Optional.empty();
    }

    /**
     * Checks a value against the bounds.
     *
     * @param value the value
     * @return the value
     * @throws IllegalArgumentException naming the setting, its bounds and the value: {@code
     *     batchSize must be between 1 and 10000, but was 0}
     */
    public T check(@Nullable T value) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        Optional<String> problem = problem(value);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(name + " " + problem.get());
        }
        return value;
    }

    @Override
    public String toString() {
        return name;
    }
}
