package io.outbox4j.store.jdbi;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Coalesces the writing side's wake-up signals on a daemon thread of its own (which ends after a
 * few seconds without work, so a store needs no closing). The enqueue path never waits for the
 * database here and, under load, mostly only reads a flag: however many commits ask, sends start at
 * least {@link #MIN_SPACING_NANOS 10 ms} apart, with at most one running and one pending.
 *
 * <ul>
 *   <li>{@link #now()}: after a commit the store saw (Jdbi's after-commit callback, auto-commit).
 *   <li>{@link #unsure()}: after an enqueue whose commit it cannot see (a plain JDBC connection).
 *       One chain of follow-up sends serves every such enqueue: the first {@value
 *       #FIRST_FOLLOW_UP_MS} ms after, then each after as long again as the latest such enqueue is
 *       old (so a transaction that commits {@code t} after its enqueue is signalled within about
 *       {@code 2t}, plus the spacing), until that enqueue is {@value #FOLLOW_UP_FOR_MS} ms old.
 * </ul>
 */
final class Signal {
    private static final Logger LOG = LoggerFactory.getLogger(Signal.class);

    /**
     * Sends start at least this far apart (10 ms): at most a hundred signals a second from one
     * store, whatever the commit rate. The first signal after a quiet spell goes at once; under
     * load a commit waits at most this long for its signal, while the relays it would wake are busy
     * claiming anyway.
     */
    static final long MIN_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    /** The first follow-up send after an enqueue whose commit is not seen. */
    static final long FIRST_FOLLOW_UP_MS = 5;

    /** Follow-up sends stop once the latest enqueue whose commit is not seen is this old. */
    static final long FOLLOW_UP_FOR_MS = 1000;

    /** Failed sends are logged at most this often. */
    private static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final Runnable send;
    private final ScheduledThreadPoolExecutor thread;
    private final AtomicBoolean pending = new AtomicBoolean();
    private final AtomicBoolean followingUp = new AtomicBoolean();
    private final AtomicLong lastFailureLog = new AtomicLong();
    private volatile long lastUnsure = System.nanoTime() - TimeUnit.HOURS.toNanos(1);
    private volatile long lastSend = System.nanoTime() - MIN_SPACING_NANOS;
    private volatile boolean everFailed;

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
    }

    /**
     * Asks for a send as soon as {@link #MIN_SPACING_NANOS} passed since the last one started;
     * coalesced with the one pending.
     */
    void now() {
        if (!pending.get() && pending.compareAndSet(false, true)) {
            long wait = lastSend + MIN_SPACING_NANOS - System.nanoTime();
            later(this::sendPending, Math.max(0, wait), TimeUnit.NANOSECONDS);
        }
    }

    /** Asks for follow-up sends after an enqueue whose commit is not seen (see the class). */
    void unsure() {
        long t = System.nanoTime();
        if (t - lastUnsure > TimeUnit.MILLISECONDS.toNanos(1)) {
            lastUnsure = t; // within a millisecond is close enough: spares a shared write
        }
        if (!followingUp.get() && followingUp.compareAndSet(false, true)) {
            later(this::followUp, FIRST_FOLLOW_UP_MS, TimeUnit.MILLISECONDS);
        }
    }

    /** Whether a chain of follow-up sends is running (for tests). */
    boolean followingUp() {
        return followingUp.get();
    }

    private void followUp() {
        now();
        long age = System.nanoTime() - lastUnsure;
        if (age < TimeUnit.MILLISECONDS.toNanos(FOLLOW_UP_FOR_MS)) {
            later(this::followUp, Math.max(MIN_SPACING_NANOS, age), TimeUnit.NANOSECONDS);
            return;
        }
        followingUp.set(false);
        // An enqueue that came after the age was read but saw the chain still running.
        if (System.nanoTime() - lastUnsure < TimeUnit.MILLISECONDS.toNanos(FOLLOW_UP_FOR_MS)
                && followingUp.compareAndSet(false, true)) {
            later(this::followUp, FIRST_FOLLOW_UP_MS, TimeUnit.MILLISECONDS);
        }
    }

    // nothing waits for these tasks: a send logs its own failure, a follow-up only asks for sends
    @SuppressWarnings("FutureReturnValueIgnored")
    private void later(Runnable task, long delay, TimeUnit unit) {
        thread.schedule(task, delay, unit);
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
