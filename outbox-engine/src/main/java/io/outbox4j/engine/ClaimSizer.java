package io.outbox4j.engine;

/**
 * Adaptive claim size of the relay loop: it starts at {@code min}, doubles after every claim that
 * came back full (up to {@code max}), halves after a partial one and falls back to {@code min}
 * after an empty one. A backlog is therefore drained with large claims after a few round trips,
 * while a relay that keeps up with its writers makes small ones. Confined to the loop thread.
 */
final class ClaimSizer {
    private final int min;
    private final int max;
    private volatile int target;

    ClaimSizer(int min, int max) {
        if (min < 1 || max < min) {
            throw new IllegalArgumentException("need 1 <= min <= max, but was " + min + ", " + max);
        }
        this.min = min;
        this.max = max;
        this.target = min;
    }

    /** How many messages the next claim asks for, unless fewer may be in flight. */
    int target() {
        return target;
    }

    /**
     * Adapts to what a claim returned.
     *
     * @param asked the claim's limit (at most {@link #target()}: fewer when the in-flight bound
     *     allowed fewer)
     * @param got how many messages it returned
     */
    void claimed(int asked, int got) {
        if (got >= asked) {
            target = (int) Math.min(max, Math.max(target, asked) * 2L);
        } else if (got == 0) {
            target = min;
        } else {
            target = Math.max(min, target / 2);
        }
    }
}
