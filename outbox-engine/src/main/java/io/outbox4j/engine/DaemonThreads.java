package io.outbox4j.engine;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread pools of daemon threads that expire when idle, so a relay that is never closed leaks
 * nothing for long.
 */
final class DaemonThreads {
    private DaemonThreads() {}

    /**
     * A pool that starts a thread per task when none is idle. The relay bounds its own concurrency;
     * an unbounded pool means a publisher call that ignores its cancellation never blocks the next
     * one.
     */
    static ExecutorService cachedPool(String namePrefix) {
        AtomicInteger count = new AtomicInteger();
        return new ThreadPoolExecutor(
                0,
                Integer.MAX_VALUE,
                10,
                TimeUnit.SECONDS,
                new SynchronousQueue<>(),
                task -> {
                    Thread t = new Thread(task, namePrefix + "-" + count.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }
}
