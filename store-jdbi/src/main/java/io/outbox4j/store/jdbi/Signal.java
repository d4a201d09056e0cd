package io.outbox4j.store.jdbi;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Coalesces the writing side's wake-up signals: however many commits ask for one, at most one send
 * runs and at most one more is pending, on a daemon thread of its own (which ends after a few
 * seconds without work, so a store needs no closing). A caller only flips a flag and, when it was
 * the first, hands the send to that thread: the enqueue path never waits for the database here.
 *
 * <p>{@link #now()} after a commit the store saw; {@link #unsure()} after an enqueue whose commit
 * it cannot see: a send {@link #UNSURE_DELAYS_MS 5, 50 and 500 ms} later, once for all the enqueues
 * of a {@value #UNSURE_WINDOW_MS} ms window.
 */
final class Signal {
    private static final Logger LOG = LoggerFactory.getLogger(Signal.class);

    /** When the sends after an unseen commit go, from the enqueue. */
    static final long[] UNSURE_DELAYS_MS = {5, 50, 500};

    /** Enqueues with unseen commits this close together share their sends. */
    static final long UNSURE_WINDOW_MS = 5;

    /**
     * Sends start at least this far apart (1 ms): at most a thousand signals a second from one
     * store, which a relay's wake-up window (4 ms by default) coalesces further.
     */
    static final long MIN_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Failed sends are logged at most this often. */
    private static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final Runnable send;
    private final ScheduledThreadPoolExecutor thread;
    private final AtomicBoolean pending = new AtomicBoolean();
    private final AtomicLong lastUnsure = new AtomicLong();
    private final AtomicLong lastFailureLog = new AtomicLong();
    private volatile boolean everUnsure;
    private volatile boolean everFailed;
    private volatile long lastSend = System.nanoTime() - MIN_SPACING_NANOS;

    /**
     * @param send sends one signal; may throw (logged, the next signal tries again)
     * @param threadName the name of the sending thread
     */
    Signal(Runnable send, String threadName) {
        this.send = send;
        this.thread =
                new ScheduledThreadPoolExecutor(
                        1,
                        r -> {
                            Thread t = new Thread(r, threadName);
                            t.setDaemon(true);
                            return t;
                        });
        thread.setKeepAliveTime(5, TimeUnit.SECONDS);
        thread.allowCoreThreadTimeOut(true);
        thread.setRemoveOnCancelPolicy(true);
    }

    /**
     * Asks for a send as soon as the sending thread is free and {@link #MIN_SPACING_NANOS} passed
     * since the last send started; coalesced with the one pending.
     */
    void now() {
        if (pending.compareAndSet(false, true)) {
            long wait = lastSend + MIN_SPACING_NANOS - System.nanoTime();
            if (wait > 0) {
                thread.schedule(this::sendPending, wait, TimeUnit.NANOSECONDS);
            } else {
                thread.execute(this::sendPending);
            }
        }
    }

    /** Asks for sends after an enqueue whose commit is not seen (see the class comment). */
    void unsure() {
        long t = System.nanoTime();
        long last = lastUnsure.get();
        if (everUnsure && t - last < TimeUnit.MILLISECONDS.toNanos(UNSURE_WINDOW_MS)) {
            return;
        }
        if (!lastUnsure.compareAndSet(last, t)) {
            return; // another thread scheduled them just now
        }
        everUnsure = true;
        for (long d : UNSURE_DELAYS_MS) {
            thread.schedule(this::now, d, TimeUnit.MILLISECONDS);
        }
    }

    private void sendPending() {
        pending.set(false); // a commit from now on asks for another send
        lastSend = System.nanoTime();
        try {
            send.run();
        } catch (RuntimeException e) {
            long t = System.nanoTime();
            long last = lastFailureLog.get();
            if ((!everFailed || t - last >= LOG_EVERY_NANOS)
                    && lastFailureLog.compareAndSet(last, t)) {
                everFailed = true;
                LOG.warn(
                        "outbox4j: a wake-up signal could not be sent (relays in other processes"
                                + " find the messages at their next poll): {}",
                        e.toString());
            }
        }
    }
}
