package io.outbox4j.faulttests;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * What a consumer saw of one {@link KeyedLoad}, broker-agnostic: fed one record at a time in the
 * order the consumer reads them (for Kafka: partition order, and a key lives on one partition), it
 * keeps, per key, the sequence numbers in first-seen order and counts
 *
 * <ul>
 *   <li><b>duplicates</b>: records of a sequence number already seen (redeliveries);
 *   <li><b>first-seen order inversions</b>: a sequence number seen for the first time after a
 *       higher one of its key, i.e. a message first published after a later message of its key. A
 *       redelivery that repeats older messages is a duplicate, not an inversion;
 *   <li><b>lost</b>: sequence numbers never seen.
 * </ul>
 *
 * Each record also carries who published it and when (the broker's append time), for recovery
 * times. Safe for use by several threads.
 */
public final class DeliveryLedger {
    private static final int EXAMPLES = 20;

    private final int expected;
    private final List<List<Publish>> publishes;
    private final Map<String, KeyTally> keys = new HashMap<>();
    private final List<String> inversionExamples = new ArrayList<>();
    private long records;
    private long foreign;
    private int distinct;
    private long inversions;
    private long lastPublishMillis = Long.MIN_VALUE;

    /**
     * A ledger for sequence numbers {@code 0 .. expected - 1}.
     *
     * @param expected how many messages the run enqueued
     */
    public DeliveryLedger(int expected) {
        this.expected = expected;
        this.publishes = new ArrayList<>(expected);
        for (int i = 0; i < expected; i++) {
            publishes.add(new ArrayList<>(1));
        }
    }

    /** One record of a message as the consumer saw it. */
    private record Publish(long atMillis, String by) {}

    private static final class KeyTally {
        final List<Integer> firstSeen = new ArrayList<>();
        int maxSeq = -1;
        int inversions;
    }

    /**
     * Records one record read by the consumer.
     *
     * @param key the record key
     * @param seq the sequence number from the record, or -1 if it has none
     * @param publishedBy which relay published it ({@code "?"} if unknown)
     * @param publishedAtMillis when the broker took it (epoch milliseconds)
     */
    public synchronized void record(
            String key, int seq, String publishedBy, long publishedAtMillis) {
        if (seq < 0 || seq >= expected) {
            foreign++;
            return;
        }
        records++;
        lastPublishMillis = Math.max(lastPublishMillis, publishedAtMillis);
        List<Publish> of = publishes.get(seq);
        of.add(new Publish(publishedAtMillis, publishedBy));
        if (of.size() == 1) {
            distinct++;
            KeyTally k = keys.computeIfAbsent(key, x -> new KeyTally());
            if (seq < k.maxSeq) {
                inversions++;
                k.inversions++;
                if (inversionExamples.size() < EXAMPLES) {
                    inversionExamples.add(
                            key
                                    + ": seq "
                                    + seq
                                    + " first published after seq "
                                    + k.maxSeq
                                    + " (by "
                                    + publishedBy
                                    + ")");
                }
            }
            k.maxSeq = Math.max(k.maxSeq, seq);
            k.firstSeen.add(seq);
            if (distinct == expected) {
                notifyAll();
            }
        }
    }

    /**
     * Waits until every message was seen at least once.
     *
     * @param timeout how long at most
     * @return {@code true} if all arrived
     * @throws InterruptedException if interrupted
     */
    public synchronized boolean awaitAll(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (distinct < expected) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    /** How many messages the run enqueued. */
    public int expected() {
        return expected;
    }

    /** Records of this run read so far, duplicates included. */
    public synchronized long records() {
        return records;
    }

    /** Records read that belong to no message of this run (should be none). */
    public synchronized long foreignRecords() {
        return foreign;
    }

    /** Messages seen at least once. */
    public synchronized int distinct() {
        return distinct;
    }

    /** Records of messages already seen. */
    public synchronized long duplicates() {
        return records - distinct;
    }

    /** Messages never seen. */
    public synchronized int lost() {
        return expected - distinct;
    }

    /** Messages first seen after a later message of their key. */
    public synchronized long inversions() {
        return inversions;
    }

    /** Keys with at least one first-seen order inversion. */
    public synchronized int keysOutOfOrder() {
        return (int) keys.values().stream().filter(k -> k.inversions > 0).count();
    }

    /** Keys seen. */
    public synchronized int keys() {
        return keys.size();
    }

    /** Up to 20 inversions, each naming the key, the sequence number and what overtook it. */
    public synchronized List<String> inversionExamples() {
        return List.copyOf(inversionExamples);
    }

    /** The sequence numbers of {@code key} in first-seen order. */
    public synchronized List<Integer> firstSeenOrder(String key) {
        KeyTally k = keys.get(key);
        return k == null ? List.of() : List.copyOf(k.firstSeen);
    }

    /** Up to {@code limit} sequence numbers never seen, lowest first. */
    public synchronized List<Integer> missing(int limit) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < expected && out.size() < limit; i++) {
            if (publishes.get(i).isEmpty()) {
                out.add(i);
            }
        }
        return out;
    }

    /** When the broker took the latest record (epoch ms), or {@code Long.MIN_VALUE}. */
    public synchronized long lastPublishMillis() {
        return lastPublishMillis;
    }

    /**
     * Counts the messages among {@code seqs} with at least one record that {@code which} accepts
     * (given the record's append time and publisher).
     *
     * @param seqs which messages
     * @param which which records count
     * @return how many of the messages have such a record
     */
    public synchronized int countWithRecord(
            Collection<Integer> seqs, BiPredicate<Long, String> which) {
        int n = 0;
        for (int seq : seqs) {
            if (seq < 0 || seq >= expected) {
                continue;
            }
            for (Publish p : publishes.get(seq)) {
                if (which.test(p.atMillis(), p.by())) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }

    /**
     * When the first record of a message was appended.
     *
     * @param seq the message
     * @return its first record's append time (epoch ms), or empty if it was not seen
     */
    public synchronized OptionalLong firstRecordAt(int seq) {
        if (seq < 0 || seq >= expected) {
            return OptionalLong.empty();
        }
        long first = Long.MAX_VALUE;
        for (Publish p : publishes.get(seq)) {
            first = Math.min(first, p.atMillis());
        }
        return first == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(first);
    }

    /**
     * The append times of the records in {@code [fromMillis, toMillis)} published by someone {@code
     * by} accepts, ascending.
     *
     * @param fromMillis from when (epoch ms)
     * @param toMillis until when, exclusive
     * @param by which publishers count
     * @return the times
     */
    public synchronized List<Long> publishTimes(
            long fromMillis, long toMillis, Predicate<String> by) {
        List<Long> times = new ArrayList<>();
        for (List<Publish> of : publishes) {
            for (Publish p : of) {
                if (p.atMillis() >= fromMillis && p.atMillis() < toMillis && by.test(p.by())) {
                    times.add(p.atMillis());
                }
            }
        }
        times.sort(null);
        return times;
    }

    /**
     * The first record at or after {@code fromMillis} of one of {@code seqs} published by someone
     * {@code by} accepts.
     *
     * @param fromMillis from when (epoch ms)
     * @param seqs which messages (all when null)
     * @param by which publishers count
     * @return its append time, or empty if there is none
     */
    public synchronized OptionalLong firstPublishAt(
            long fromMillis, @Nullable Collection<Integer> seqs, Predicate<String> by) {
        long best = Long.MAX_VALUE;
        Collection<Integer> which = seqs;
        if (which == null) {
            which = new ArrayList<>();
            for (int i = 0; i < expected; i++) {
                which.add(i);
            }
        }
        for (int seq : which) {
            if (seq < 0 || seq >= expected) {
                continue;
            }
            for (Publish p : publishes.get(seq)) {
                if (p.atMillis() >= fromMillis && p.atMillis() < best && by.test(p.by())) {
                    best = p.atMillis();
                }
            }
        }
        return best == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(best);
    }
}
