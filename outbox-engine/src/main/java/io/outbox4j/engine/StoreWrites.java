package io.outbox4j.engine;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs a batch's store writes on a pool of their own, each bounded by its own timeout and deaf to
 * the caller's interrupt: the caller may be shutting down, the outcome of a delivery must still be
 * recorded. Without a pool ({@link #direct}) the writes run on the calling thread (a batch thread
 * of the relay loop, which nobody interrupts): no hand-off, no bound but the store's own. A failure
 * is reported to the observer, logged (the first of each kind per batch; the rest counted by {@link
 * #logSummary()}) and turned into {@code null}; after one write timed out the store is taken to be
 * hanging and the remaining writes of this instance are skipped (their leases expire instead).
 */
final class StoreWrites {
    private final @Nullable ExecutorService pool;
    private final Duration timeout;
    private final SafeObserver observer;
    private final RelayLog log;
    private final Map<String, Integer> failures = new LinkedHashMap<>();
    private boolean hanging;

    StoreWrites(
            @Nullable ExecutorService pool, Duration timeout, SafeObserver observer, RelayLog log) {
        this.pool = pool;
        this.timeout = timeout;
        this.observer = observer;
        this.log = log;
    }

    /**
     * Runs {@code write}; returns its result, or {@code null} if it failed, timed out or was
     * skipped.
     *
     * @param what what the write does, for the log ("release a failed message"); failures are
     *     counted per {@code what}
     */
    /** Writes on the calling thread, bounded only by the store's own timeouts. */
    static StoreWrites direct(SafeObserver observer, RelayLog log) {
        return new StoreWrites(null, Duration.ZERO, observer, log);
    }

    <T> @Nullable T run(String what, Supplier<T> write) {
        if (hanging) {
            return null;
        }
        if (pool == null) {
            try {
                return write.get();
            } catch (RuntimeException e) {
                failed(what, e);
                return null;
            }
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
                failed(what, e);
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
                    failed(
                            what,
                            new TimeoutException(
                                    "store write did not finish within "
                                            + Durations.format(timeout)
                                            + "; the batch's remaining writes of this kind are"
                                            + " skipped and their leases left to expire"));
                    return null;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    failed(what, Objects.requireNonNullElse(e.getCause(), e));
                    return null;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void failed(String what, Throwable error) {
        observer.storeError(error);
        int before = failures.merge(what, 1, Integer::sum) - 1;
        if (before == 0) {
            log.storeFailed(what, error);
        }
    }

    /** Logs how many failures of each kind were not logged one by one. */
    void logSummary() {
        failures.forEach(
                (kind, count) -> {
                    if (count > 1) {
                        log.moreStoreFailures(kind, count - 1);
                    }
                });
        failures.clear();
    }
}
