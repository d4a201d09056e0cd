package io.outbox4j.benchmarks;

import java.util.Arrays;
import java.util.Collection;

/** Order statistics over measured samples. */
final class Stats {
    private Stats() {}

    /**
     * Returns the median (the mean of the two middle values for an even count).
     *
     * @param values the samples, not empty
     * @return the median
     */
    static double median(Collection<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (v.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        int m = v.length / 2;
        return v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
    }

    /**
     * Returns the median of the pairwise ratios {@code a[i] / b[i]}: each pair was measured back to
     * back, so a change of the machine's load between rounds cancels out of each ratio.
     *
     * @param a the subject's values, one per round
     * @param b the reference's values, same rounds
     * @return the median ratio
     */
    static double medianRatio(java.util.List<Double> a, java.util.List<Double> b) {
        if (a.size() != b.size() || a.isEmpty()) {
            throw new IllegalArgumentException(
                    "need as many subject as reference rounds, but had "
                            + a.size()
                            + " and "
                            + b.size());
        }
        java.util.List<Double> ratios = new java.util.ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            ratios.add(a.get(i) / b.get(i));
        }
        return median(ratios);
    }

    /**
     * Returns a percentile by the nearest-rank method.
     *
     * @param sorted the samples in ascending order, not empty
     * @param p the percentile, 0 to 100
     * @return the smallest sample with at least {@code p} percent of the samples at or below it
     */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    /**
     * Sorts a copy of the samples.
     *
     * @param samples the samples
     * @return a sorted copy
     */
    static long[] sorted(long[] samples) {
        long[] s = samples.clone();
        Arrays.sort(s);
        return s;
    }

    /**
     * Converts nanoseconds to milliseconds.
     *
     * @param nanos nanoseconds
     * @return milliseconds, fractional
     */
    static double ms(long nanos) {
        return nanos / 1_000_000.0;
    }

    /**
     * Computes a rate.
     *
     * @param count how many things happened
     * @param nanos in how many nanoseconds
     * @return things per second
     */
    static double perSecond(long count, long nanos) {
        return count * 1_000_000_000.0 / nanos;
    }
}
