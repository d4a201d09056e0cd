package io.outbox4j.api;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Which dead letters to list, replay or discard: an optional topic, an optional range of
 * dead-letter times, and for listing a page size and the cursor where the previous page ended.
 * Immutable; every {@code with}-style method returns a new query.
 *
 * <pre>{@code
 * DeadLetterQuery q = DeadLetterQuery.all().topic("orders").deadBefore(cutoff).limit(50);
 * DeadLetterPage page = admin.deadLetters(q);
 * while (page.next().isPresent()) {
 *     page = admin.deadLetters(q.after(page.next().get()));
 * }
 * }</pre>
 */
public final class DeadLetterQuery {
    /** The page size used when none is given. */
    public static final int DEFAULT_LIMIT = 100;

    /** The largest page size, and the most ids one replay or discard call takes. */
    public static final int MAX_LIMIT = 1000;

    private static final DeadLetterQuery ALL =
            new DeadLetterQuery(null, null, null, null, DEFAULT_LIMIT);

    private final @Nullable String topic;
    private final @Nullable Instant deadFrom;
    private final @Nullable Instant deadBefore;
    private final @Nullable String after;
    private final int limit;

    private DeadLetterQuery(
            @Nullable String topic,
            @Nullable Instant deadFrom,
            @Nullable Instant deadBefore,
            @Nullable String after,
            int limit) {
        this.topic = topic;
        this.deadFrom = deadFrom;
        this.deadBefore = deadBefore;
        this.after = after;
        this.limit = limit;
    }

    /**
     * Every dead letter, first page, {@value #DEFAULT_LIMIT} per page.
     *
     * @return the unfiltered query
     */
    public static DeadLetterQuery all() {
        return ALL;
    }

    /**
     * Only dead letters of one topic.
     *
     * @param topic the topic
     * @return the narrowed query
     * @throws IllegalArgumentException if the topic is blank
     */
    public DeadLetterQuery topic(String topic) {
        Checks.text(topic, "topic", 255);
        return new DeadLetterQuery(topic, deadFrom, deadBefore, after, limit);
    }

    /**
     * Only dead letters given up at or after an instant.
     *
     * @param from the earliest dead-letter time, inclusive
     * @return the narrowed query
     */
    public DeadLetterQuery deadFrom(Instant from) {
        Checks.notNull(from, "deadFrom");
        return new DeadLetterQuery(topic, from, deadBefore, after, limit);
    }

    /**
     * Only dead letters given up before an instant.
     *
     * @param before the dead-letter time bound, exclusive
     * @return the narrowed query
     */
    public DeadLetterQuery deadBefore(Instant before) {
        Checks.notNull(before, "deadBefore");
        return new DeadLetterQuery(topic, deadFrom, before, after, limit);
    }

    /**
     * The page after the one whose {@link DeadLetterPage#next()} returned this cursor.
     *
     * @param cursor an opaque cursor from a previous page of the same store
     * @return the query for the next page
     */
    public DeadLetterQuery after(String cursor) {
        Checks.text(cursor, "cursor", 512);
        return new DeadLetterQuery(topic, deadFrom, deadBefore, cursor, limit);
    }

    /**
     * The page size.
     *
     * @param limit 1 to {@value #MAX_LIMIT}
     * @return the query with that page size
     * @throws IllegalArgumentException if the limit is out of range
     */
    public DeadLetterQuery limit(int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException(
                    "limit must be between 1 and " + MAX_LIMIT + ", but was " + limit);
        }
        return new DeadLetterQuery(topic, deadFrom, deadBefore, after, limit);
    }

    /**
     * The topic filter.
     *
     * @return the topic, empty for all topics
     */
    public Optional<String> topic() {
        return Optional.ofNullable(topic);
    }

    /**
     * The inclusive lower bound of dead-letter times.
     *
     * @return the bound, empty for none
     */
    public Optional<Instant> deadFrom() {
        return Optional.ofNullable(deadFrom);
    }

    /**
     * The exclusive upper bound of dead-letter times.
     *
     * @return the bound, empty for none
     */
    public Optional<Instant> deadBefore() {
        return Optional.ofNullable(deadBefore);
    }

    /**
     * The cursor of the previous page.
     *
     * @return the cursor, empty for the first page
     */
    public Optional<String> after() {
        return Optional.ofNullable(after);
    }

    /**
     * The page size.
     *
     * @return 1 to {@value #MAX_LIMIT}
     */
    public int limit() {
        return limit;
    }

    /**
     * Whether a dead letter matches the filter part of this query (topic and time range).
     *
     * @param message the dead letter
     * @return {@code true} if it is selected
     */
    public boolean matches(DeadMessage message) {
        return (topic == null || topic.equals(message.message().topic()))
                && (deadFrom == null || !message.deadAt().isBefore(deadFrom))
                && (deadBefore == null || message.deadAt().isBefore(deadBefore));
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof DeadLetterQuery q
                && Objects.equals(topic, q.topic)
                && Objects.equals(deadFrom, q.deadFrom)
                && Objects.equals(deadBefore, q.deadBefore)
                && Objects.equals(after, q.after)
                && limit == q.limit;
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, deadFrom, deadBefore, after, limit);
    }

    @Override
    public String toString() {
        return "DeadLetterQuery[topic="
                + topic
                + ", deadFrom="
                + deadFrom
                + ", deadBefore="
                + deadBefore
                + ", after="
                + after
                + ", limit="
                + limit
                + "]";
    }
}
