package io.outbox4j.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The hand-written baseline: every 10 ms, claims what is due in batches of {@value #BATCH} until a
 * claim comes back short, sends each batch (flush, await the acks), notes the ack time of every
 * message and deletes the batch.
 */
final class TenMsPoller implements AutoCloseable {
    static final int BATCH = 100;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final BackgroundLoop loop;

    TenMsPoller(Env env, String table, Drains.Send send, Map<String, Long> ackedAt) {
        this.loop =
                new BackgroundLoop(
                        "bench-poller",
                        "the hand-written poller",
                        stopped -> {
                            try (HandWritten.Loop claims =
                                    new HandWritten.Loop(
                                            env.pool(),
                                            table,
                                            "bench-poller",
                                            Duration.ofMinutes(5),
                                            BATCH)) {
                                long next = System.nanoTime();
                                while (!stopped.getAsBoolean()) {
                                    List<HandWritten.Row> rows;
                                    do {
                                        rows = claims.claim();
                                        if (!rows.isEmpty()) {
                                            send.send(rows);
                                            long now = System.nanoTime();
                                            for (HandWritten.Row row : rows) {
                                                ackedAt.put(row.id(), now);
                                            }
                                            claims.delete(rows);
                                        }
                                    } while (rows.size() == BATCH && !stopped.getAsBoolean());
                                    next += POLL_NANOS;
                                    long wait = next - System.nanoTime();
                                    if (wait > 0) {
                                        LockSupport.parkNanos(wait);
                                    } else {
                                        next = System.nanoTime();
                                    }
                                }
                            }
                        });
    }

    @Override
    public void close() {
        loop.close();
    }
}
