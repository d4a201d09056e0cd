package io.outbox4j.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The outbox at one instant, counted by state. The states do not overlap: every message in the
 * outbox is exactly one of ready, delayed, leased or dead.
 *
 * @param at the instant the states were judged at
 * @param total the counts over all topics
 * @param byTopic the counts per topic (only topics with at least one message)
 * @param blockedKeys how many keys have a dead letter that blocks them: their later messages, those
 *     waiting now and those enqueued later, wait until it is replayed or discarded (a dead letter
 *     with nothing behind it yet counts). A key whose head is leased or waiting for its retry is
 *     not blocked in this sense (its followers count as ready when due, parked or not); with a
 *     store whose dead letters do not block their key, 0
 */
public record OutboxStatistics(
        Instant at, TopicStatistics total, Map<String, TopicStatistics> byTopic, long blockedKeys) {
    /**
     * Validates and copies.
     *
     * @param at the instant
     * @param total the totals
     * @param byTopic the per-topic counts
     * @param blockedKeys the blocked keys
     * @throws IllegalArgumentException if a field is missing or a count negative
     */
    public OutboxStatistics {
        Checks.notNull(at, "at");
        Checks.notNull(total, "total");
        byTopic = Map.copyOf(Checks.notNull(byTopic, "byTopic"));
        if (blockedKeys < 0) {
            throw new IllegalArgumentException("blockedKeys must be >= 0, but was " + blockedKeys);
        }
    }

    /**
     * Counts of one topic (or of all).
     *
     * @param ready due now and not leased (including messages waiting behind an earlier message of
     *     their key)
     * @param delayed waiting for their {@code notBefore} or their retry time
     * @param leased claimed by a relay whose lease has not ended
     * @param dead dead-lettered
     * @param oldestReadyAge how long the oldest ready message has been due ({@link Duration#ZERO}
     *     when none is ready)
     */
    public record TopicStatistics(
            long ready, long delayed, long leased, long dead, Duration oldestReadyAge) {
        /**
         * Validates.
         *
         * @param ready ready
         * @param delayed delayed
         * @param leased leased
         * @param dead dead
         * @param oldestReadyAge the age of the oldest ready message
         * @throws IllegalArgumentException if a count is negative or the age missing or negative
         */
        public TopicStatistics {
            if (ready < 0 || delayed < 0 || leased < 0 || dead < 0) {
                throw new IllegalArgumentException(
                        "counts must be >= 0, but were ready="
                                + ready
                                + ", delayed="
                                + delayed
                                + ", leased="
                                + leased
                                + ", dead="
                                + dead);
            }
            Checks.notNull(oldestReadyAge, "oldestReadyAge");
            if (oldestReadyAge.isNegative()) {
                throw new IllegalArgumentException(
                        "oldestReadyAge must not be negative, but was " + oldestReadyAge);
            }
        }
    }
}
