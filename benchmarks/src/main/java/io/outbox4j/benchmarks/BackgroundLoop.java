package io.outbox4j.benchmarks;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * A daemon thread that runs a body until closed, keeping the first failure: {@link #close()} stops
 * it, waits for it and rethrows what ended it.
 */
final class BackgroundLoop implements AutoCloseable {
    /** The body: runs until {@code stopped} says so. */
    interface Body {
        void run(BooleanSupplier stopped) throws Exception;
    }

    private final Thread thread;
    private final String what;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean stop;

    BackgroundLoop(String name, String what, Body body) {
        this.what = what;
        this.thread =
                new Thread(
                        () -> {
                            try {
                                body.run(() -> stop);
                            } catch (Exception | Error e) {
                                failure.compareAndSet(null, e);
                            }
                        },
                        name);
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
        Throwable t = failure.get();
        if (t != null) {
            throw new IllegalStateException(what + " failed: " + t, t);
        }
    }
}
