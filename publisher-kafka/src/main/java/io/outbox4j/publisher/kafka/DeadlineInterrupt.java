package io.outbox4j.publisher.kafka;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Bounds the blocking steps of a publish call that runs on the caller's thread: a Kafka send blocks
 * up to {@code max.block.ms} for metadata or buffer space, a flush until the batch is acknowledged,
 * and both end with an {@code InterruptException} when the thread is interrupted. One timer thread
 * per publisher interrupts a call's thread at its deadline, unless the call left the producer
 * first; the work itself is never handed to another thread.
 */
final class DeadlineInterrupt {
    private final ScheduledThreadPoolExecutor timer;

    DeadlineInterrupt(String threadName) {
        AtomicInteger threads = new AtomicInteger();
        this.timer =
                new ScheduledThreadPoolExecutor(
                        1,
                        task -> {
                            Thread t = new Thread(task, threadName + threads.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        });
        timer.setRemoveOnCancelPolicy(true);
    }

    /**
     * Arms the interrupt of the calling thread at {@code deadline} ({@link System#nanoTime()}).
     *
     * @throws RejectedExecutionException once {@link #shutdown()} was called
     */
    Armed arm(long deadline) {
        Armed armed = new Armed(Thread.currentThread());
        armed.task =
                timer.schedule(
                        armed::fire,
                        Math.max(0, deadline - System.nanoTime()),
                        TimeUnit.NANOSECONDS);
        return armed;
    }

    /** Accepts no new call; the interrupts already armed still fire at their deadlines. */
    void shutdown() {
        timer.shutdown();
    }

    /** The interrupt armed for one call. */
    static final class Armed {
        private final Thread thread;
        private @Nullable ScheduledFuture<?> task;
        private boolean disarmed; // guarded by this
        private boolean fired; // guarded by this

        private Armed(Thread thread) {
            this.thread = thread;
        }

        private synchronized void fire() {
            if (!disarmed) {
                fired = true;
                thread.interrupt();
            }
        }

        /**
         * Called by the armed thread when it left the producer: the interrupt can no longer come,
         * and the interrupt status it set, if it fired, is cleared (an interrupt from anyone else
         * is kept).
         *
         * @return whether the deadline interrupted the call
         */
        boolean disarm() {
            ScheduledFuture<?> t = task;
            if (t != null) {
                t.cancel(false);
            }
            synchronized (this) {
                disarmed = true;
                if (fired) {
                    Thread.interrupted();
                }
                return fired;
            }
        }
    }
}
