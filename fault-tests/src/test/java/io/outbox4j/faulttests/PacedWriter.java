package io.outbox4j.faulttests;

import io.outbox4j.api.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Enqueues a drill's load on a thread of its own, in enqueue order: a backlog at once, then a
 * steady trickle (every 100 ms a tenth of {@code perSecond}) until {@link #finish()} enqueues the
 * rest at once. So every key keeps getting new messages while a drill's faults come and go (a
 * backlog alone would be drained by four relays long before the last fault), and the keys a faulty
 * relay owned always have messages waiting for whoever takes them over.
 */
final class PacedWriter implements AutoCloseable {
    private final OutboxDatabase db;
    private final KeyedLoad load;
    private final int backlog;
    private final int perTick;
    private final Thread thread;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean flush;
    private volatile boolean stop;
    private volatile int written;
    private volatile long trickleRanOutAtMillis;

    /**
     * @param db the drill's database
     * @param load the drill's load
     * @param backlog how many messages to enqueue at once first
     * @param perSecond the trickle's rate afterwards
     */
    PacedWriter(OutboxDatabase db, KeyedLoad load, int backlog, int perSecond) {
        this.db = db;
        this.load = load;
        this.backlog = Math.min(backlog, load.messages());
        this.perTick = Math.max(1, perSecond / 10);
        this.thread = new Thread(this::run, "paced-writer-" + load.run());
        thread.setDaemon(true);
    }

    /** Starts writing; returns once the backlog is committed. */
    PacedWriter start() throws InterruptedException {
        thread.start();
        while (written < backlog && thread.isAlive()) {
            Thread.sleep(5);
        }
        checkHealthy();
        return this;
    }

    private void run() {
        try {
            write(backlog);
            long next = System.nanoTime();
            while (!stop && written < load.messages()) {
                if (flush) {
                    write(load.messages() - written);
                    break;
                }
                next += 100_000_000L;
                long sleep = next - System.nanoTime();
                if (sleep > 0) {
                    Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
                }
                write(Math.min(perTick, load.messages() - written));
                if (written == load.messages() && !flush) {
                    trickleRanOutAtMillis = System.currentTimeMillis();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            failure.set(e);
        }
    }

    private void write(int n) {
        if (n <= 0) {
            return;
        }
        int from = written;
        List<Message> chunk = new ArrayList<>(n);
        for (int seq = from; seq < from + n; seq++) {
            chunk.add(load.message(seq));
        }
        db.enqueue(chunk);
        written = from + n;
    }

    /** Messages committed so far. */
    int written() {
        return written;
    }

    /**
     * When the trickle wrote the load's last message before {@link #finish()} was called (the drill
     * ran longer than its load was sized for), or 0.
     */
    long trickleRanOutAtMillis() {
        return trickleRanOutAtMillis;
    }

    /** Enqueues the rest of the load at once and waits until it is committed. */
    void finish() throws InterruptedException {
        flush = true;
        thread.join(120_000);
        checkHealthy();
        if (written != load.messages()) {
            throw new IllegalStateException(
                    "the writer enqueued " + written + " of " + load.messages() + " messages");
        }
    }

    /** Throws what ended the writer, if anything did. */
    void checkHealthy() {
        Throwable t = failure.get();
        if (t != null) {
            throw new IllegalStateException("the paced writer failed: " + t, t);
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        thread.join(30_000);
    }
}
