package io.outbox4j.engine;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The relay-wide bound on publisher calls in flight ({@code workers}), shared by every batch in
 * flight and by {@link Relay#runOnce()}. A batch that finds no free slot leaves a wake-up action
 * and is woken (on the releasing thread, which only signals) when a slot frees; it then asks again.
 */
final class CallSlots {
    private final int max;
    private int used;
    private final Set<Runnable> waiting = new LinkedHashSet<>();

    CallSlots(int max) {
        this.max = max;
    }

    /**
     * Takes a slot if one is free; otherwise registers {@code wake}, run once when a slot frees.
     *
     * @return whether a slot was taken
     */
    synchronized boolean tryAcquire(Runnable wake) {
        if (used < max) {
            used++;
            waiting.remove(wake);
            return true;
        }
        waiting.add(wake);
        return false;
    }

    /** Gives a slot back and wakes every waiting batch (they race for it). */
    void release() {
        List<Runnable> wake;
        synchronized (this) {
            if (used <= 0) {
                throw new IllegalStateException("publisher call slot released twice");
            }
            used--;
            if (waiting.isEmpty()) {
                return;
            }
            wake = new ArrayList<>(waiting);
            waiting.clear();
        }
        for (Runnable r : wake) {
            r.run();
        }
    }

    /** Forgets a wake-up action (its batch no longer waits). */
    synchronized void cancel(Runnable wake) {
        waiting.remove(wake);
    }

    /** Slots in use, for tests. */
    synchronized int used() {
        return used;
    }
}
