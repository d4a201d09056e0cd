package io.outbox4j.benchmarks;

import java.util.Arrays;

/** A thread-safe, growable list of durations in nanoseconds. */
final class Timings {
    private long[] values = new long[1024];
    private int size;

    synchronized void add(long nanos) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = nanos;
    }

    synchronized void addAll(Timings other) {
        for (long v : other.sorted()) {
            add(v);
        }
    }

    /**
     * Returns the sum of all durations.
     *
     * @return nanoseconds
     */
    synchronized long totalNanos() {
        long t = 0;
        for (int i = 0; i < size; i++) {
            t += values[i];
        }
        return t;
    }

    synchronized int size() {
        return size;
    }

    synchronized long[] sorted() {
        long[] s = Arrays.copyOf(values, size);
        Arrays.sort(s);
        return s;
    }

    /**
     * Returns a percentile in milliseconds.
     *
     * @param p the percentile
     * @return milliseconds, or NaN when empty
     */
    double percentileMs(double p) {
        long[] s = sorted();
        return s.length == 0 ? Double.NaN : Stats.ms(Stats.percentile(s, p));
    }
}
