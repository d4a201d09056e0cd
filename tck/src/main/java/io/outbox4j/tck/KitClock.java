package io.outbox4j.tck;

import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The fixture the store and admin kits share: the kit's clock and its test data. One lives in each
 * kit instance (JUnit makes one per rule), and the kit's rule groups reach it through {@link
 * KitRules}.
 *
 * <p>The clock starts at the wall clock plus the store's clock-skew tolerance and only moves
 * forward. Ids, {@code occurredAt} and enqueue order never agree: ids carry a letter that scrambles
 * their order (b1, x2, f3, …), and {@code occurredAt} zigzags (+1 s, −2 s, +3 s, …).
 */
final class KitClock {
    /** Letters that make id order disagree with enqueue order (see {@link #nextId()}). */
    private static final String ID_LETTERS = "qbxfmazkdt";

    private final Supplier<Duration> tolerance;
    private Instant time = Instant.EPOCH;
    private Instant wallAtStart = Instant.EPOCH;
    private String idPrefix = "tck-";
    private String lastId = "";
    private int idCounter;
    private int keyCounter;

    /**
     * @param tolerance the kit's {@code clockSkewTolerance()}, asked each time the clock catches up
     */
    KitClock(Supplier<Duration> tolerance) {
        this.tolerance = tolerance;
    }

    /** Starts a rule: a fresh id prefix, counters at zero, the clock at the wall clock. */
    void start() {
        wallAtStart = Instant.now();
        time = wallAtStart.truncatedTo(ChronoUnit.MILLIS);
        idPrefix = "tck-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        idCounter = 0;
        keyCounter = 0;
        syncWithWallClock();
    }

    /** Moves the kit's clock up to the wall clock plus the tolerance, never back. */
    Instant syncWithWallClock() {
        Duration skew = tolerance.get();
        if (skew == null || skew.isNegative()) {
            throw new IllegalStateException(
                    "clockSkewTolerance() must be zero or positive, but was " + skew);
        }
        Instant wall = Instant.now().plus(skew).truncatedTo(ChronoUnit.MILLIS).plusMillis(1);
        if (wall.isAfter(time)) {
            time = wall;
        }
        return time;
    }

    Instant now() {
        return time;
    }

    Instant advance(Duration by) {
        time = time.plus(by);
        return time;
    }

    Instant advanceTo(Instant to) {
        if (to.isBefore(time)) {
            throw new IllegalStateException("kit clock would move back from " + time + " to " + to);
        }
        time = to;
        return time;
    }

    /** When the rule started, by the wall clock. */
    Instant wallAtStart() {
        return wallAtStart;
    }

    /** The prefix of every id and key of this rule. */
    String idPrefix() {
        return idPrefix;
    }

    /** How many ids this rule has handed out. */
    int idCounter() {
        return idCounter;
    }

    /** Counts {@code ids} more ids as handed out and returns the counter. */
    int skipIds(int ids) {
        idCounter += ids;
        return idCounter;
    }

    /**
     * A fresh id: the prefix, a letter that scrambles the order, and a counter, so that sorting ids
     * never gives enqueue order (b1, x2, f3, …).
     */
    String nextId() {
        idCounter++;
        lastId = idPrefix + ID_LETTERS.charAt(idCounter % ID_LETTERS.length()) + idCounter;
        return lastId;
    }

    /** The id {@link #nextId()} handed out last. */
    String lastId() {
        return lastId;
    }

    /** A fresh ordering key of this rule. */
    String nextKey() {
        return idPrefix + "key-" + ++keyCounter;
    }

    /**
     * A message of the topic with a fresh id (its number is then {@link #idCounter()}), module
     * {@code tck} and an {@code occurredAt} that zigzags around an hour before the rule started.
     */
    Message.Builder message(String topic) {
        String id = nextId();
        long zigzag = idCounter % 2 == 0 ? -idCounter : idCounter;
        return Message.builder()
                .id(id)
                .topic(topic)
                .module("tck")
                .occurredAt(
                        wallAtStart
                                .truncatedTo(ChronoUnit.SECONDS)
                                .minus(Duration.ofHours(1))
                                .plusSeconds(zigzag));
    }

    @Override
    public String toString() {
        return "kit clock " + time + ", ids " + idPrefix + "*";
    }
}
