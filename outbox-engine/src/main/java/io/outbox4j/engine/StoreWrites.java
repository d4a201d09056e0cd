package io.outbox4j.engine;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Runs a batch's outcome writes on a pool of their own, each bounded by its own timeout and deaf to
 * the caller's interrupt: the caller may be shutting down, the outcome of a delivery must still be
 * recorded. A failure is reported to the observer and turned into {@code null}; after one write
 * timed out the store is taken to be hanging and the batch's remaining writes are skipped (their
 * leases expire instead).
 */
final class StoreWrites {
    private final ExecutorService pool;
    private final Duration timeout;
    private final SafeObserver observer;
    private boolean hanging;

    StoreWrites(ExecutorService pool, Duration timeout, SafeObserver observer) {
        this.pool = pool;
        this.timeout = timeout;
        this.observer = observer;
    }

    /**
     * Runs {@code write}; returns its result, or {@code null} if it failed, timed out or was
     * skipped.
     */
    <T> T run(Supplier<T> write) {
        if (hanging) {
            return null;
        }
        Future<T> future;
        try {
            future = pool.submit(write::get);
        } catch (RejectedExecutionException closedPool) {
            // The relay's pools are shut down (close() ran out of time): write on this thread
            // instead.
            try {
                return write.get();
            } catch (RuntimeException e) {
                observer.storeError(e);
                return null;
            }
        }
        long deadline = System.nanoTime() + Durations.nanos(timeout);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (TimeoutException e) {
                    future.cancel(true);
                    hanging = true;
                    observer.storeError(
                            new TimeoutException(
                                    "outcome write did not finish within "
                                            + Durations.format(timeout)
                                            + "; the batch's remaining writes are skipped and "
                                            + "their leases left to expire"));
                    return null;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    observer.storeError(e.getCause());
                    return null;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
