package io.outbox4j.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The hand-written baseline: every 10 ms, claims what is due in batches of {@value #BATCH} until a
 * claim comes back short, sends each batch (flush, await the acks), notes the ack time of every
 * message and deletes the batch.
 */
final class TenMsPoller implements AutoCloseable {
    static final int BATCH = 100;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Thread thread;
    private volatile boolean stop;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    TenMsPoller(Env env, String table, Drains.Send send, Map<String, Long> ackedAt) {
        this.thread =
                new Thread(
                        () -> {
                            try (HandWritten.Loop loop =
                                    new HandWritten.Loop(
                                            env.pool(),
                                            table,
                                            "bench-poller",
                                            Duration.ofMinutes(5),
                                            BATCH)) {
                                long next = System.nanoTime();
                                while (!stop) {
                                    List<HandWritten.Row> rows;
                                    do {
                                        rows = loop.claim();
                                        if (!rows.isEmpty()) {
                                            send.send(rows);
                                            long now = System.nanoTime();
                                            for (HandWritten.Row row : rows) {
                                                ackedAt.put(row.id(), now);
                                            }
                                            loop.delete(rows);
                                        }
                                    } while (rows.size() == BATCH && !stop);
                                    next += POLL_NANOS;
                                    long wait = next - System.nanoTime();
                                    if (wait > 0) {
                                        LockSupport.parkNanos(wait);
                                    } else {
                                        next = System.nanoTime();
                                    }
                                }
                            } catch (Exception | Error e) {
                                failure.compareAndSet(null, e);
                            }
                        },
                        "bench-poller");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() {
        stop = true;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure.get() != null) {
            throw new IllegalStateException(
                    "the hand-written poller failed: " + failure.get(), failure.get());
        }
    }
}
