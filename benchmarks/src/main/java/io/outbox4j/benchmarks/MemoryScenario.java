package io.outbox4j.benchmarks;

import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory: the relay (no-op publisher, so only the relay and the store are measured) drains a large
 * backlog of 1 KiB messages, then a backlog ten times smaller. A sampler reads the used heap every
 * 100 ms and, every second, forces a full collection and reads the heap still in use (the live
 * set). Bounded memory means the live set while draining the large backlog is no bigger than while
 * draining the small one.
 */
final class MemoryScenario {
    static final String SUBJECT = "memory_outbox";
    private static final long MIB = 1024 * 1024;

    private MemoryScenario() {}

    /** Peak heap figures of one drain. */
    record Peak(long idleLive, long peakLive, long peakUsed, double rate, List<Long> liveSamples) {
        /**
         * The highest of the last {@code n} live-heap samples (all of them when there are fewer).
         */
        long peakOfLast(int n) {
            long max = idleLive;
            for (int i = Math.max(0, liveSamples.size() - n); i < liveSamples.size(); i++) {
                max = Math.max(max, liveSamples.get(i));
            }
            return max;
        }
    }

    static Result run(Env env) {
        Options o = env.options;
        int small = o.size("memory-small");
        int large = o.size("memory-large");
        int payload = o.size("memory-payload");
        int batch = io.outbox4j.engine.Relay.DEFAULT_BATCH_SIZE;
        Result r =
                new Result(
                                "memory",
                                "Memory: peak live heap of the relay draining "
                                        + large
                                        + " vs "
                                        + small
                                        + " rows of "
                                        + payload
                                        + " B, relay defaults")
                        .config("small_rows", small)
                        .config("large_rows", large)
                        .config("payload_bytes", payload)
                        .config("relay", Drains.relaySettings())
                        .config("publisher", "no-op")
                        .config(
                                "sampling",
                                "used heap every 100 ms; full GC + used heap (live set) every 1 s")
                        .config("max_heap_mib", Runtime.getRuntime().maxMemory() / MIB);
        JdbiOutboxStore store = env.store(SUBJECT);
        // warm-up: load the relay's and the driver's classes before the first idle reading
        env.load(SUBJECT, "w-", Math.min(small, 5 * batch), payload, false);
        Drains.relay(env, store, new Instruments.NoopPublisher(), Math.min(small, 5 * batch));

        Peak big = drain(env, store, "L", large, payload);
        Peak little = drain(env, store, "S", small, payload);
        // A maximum over more samples is higher by chance alone: compare equal sample counts, taken
        // at the end of
        // the large drain, where any growth with the backlog would have accumulated.
        long late = big.peakOfLast(Math.max(1, little.liveSamples().size()));
        r.figure(
                        "large_peak_live_mib",
                        large + " rows: peak live heap",
                        big.peakLive() / (double) MIB,
                        "MiB")
                .figure(
                        "small_peak_live_mib",
                        small + " rows: peak live heap",
                        little.peakLive() / (double) MIB,
                        "MiB")
                .figure(
                        "large_idle_live_mib",
                        large + " rows: live heap before the relay started",
                        big.idleLive() / (double) MIB,
                        "MiB")
                .figure(
                        "small_idle_live_mib",
                        small + " rows: live heap before the relay started",
                        little.idleLive() / (double) MIB,
                        "MiB")
                .figure(
                        "large_relay_live_mib",
                        large + " rows: peak live heap above idle",
                        (big.peakLive() - big.idleLive()) / (double) MIB,
                        "MiB")
                .figure(
                        "small_relay_live_mib",
                        small + " rows: peak live heap above idle",
                        (little.peakLive() - little.idleLive()) / (double) MIB,
                        "MiB")
                .figure(
                        "large_peak_used_mib",
                        large + " rows: peak used heap (incl. garbage)",
                        big.peakUsed() / (double) MIB,
                        "MiB")
                .figure(
                        "small_peak_used_mib",
                        small + " rows: peak used heap (incl. garbage)",
                        little.peakUsed() / (double) MIB,
                        "MiB")
                .figure(
                        "large_msgs_per_s",
                        large + " rows: drain rate (with the sampler's GCs)",
                        big.rate(),
                        "msg/s")
                .figure(
                        "large_samples",
                        "live-heap samples of the large drain",
                        big.liveSamples().size(),
                        "")
                .figure(
                        "small_samples",
                        "live-heap samples of the small drain",
                        little.liveSamples().size(),
                        "")
                .figure(
                        "large_late_peak_live_mib",
                        large
                                + " rows: peak live heap over its last "
                                + Math.max(1, little.liveSamples().size())
                                + " samples",
                        late / (double) MIB,
                        "MiB")
                .figure(
                        "peak_ratio",
                        "peak live heap large / small (all samples; more samples, higher max by chance)",
                        big.peakLive() / (double) little.peakLive(),
                        "")
                .check(
                        "late peak live heap large / small (equal sample counts)",
                        late / (double) little.peakLive(),
                        "<=",
                        1.25);
        r.headline(
                String.format(
                        Locale.ROOT,
                        "%.1f MiB peak live heap (%d rows)",
                        big.peakLive() / (double) MIB,
                        large),
                String.format(
                        Locale.ROOT,
                        "%.1f MiB (%d rows)",
                        little.peakLive() / (double) MIB,
                        small));
        env.execute("DROP TABLE " + Env.q(SUBJECT));
        return r;
    }

    private static Peak drain(
            Env env, JdbiOutboxStore store, String prefix, int rows, int payload) {
        env.execute("TRUNCATE " + Env.q(SUBJECT));
        env.log("memory: loading " + rows + " rows of " + payload + " B");
        env.load(SUBJECT, prefix, rows, payload, false);
        env.settle(SUBJECT);
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long idle = liveHeap(memory);
        AtomicLong peakLive = new AtomicLong(idle);
        List<Long> samples = new CopyOnWriteArrayList<>();
        AtomicLong peakUsed = new AtomicLong(memory.getHeapMemoryUsage().getUsed());
        AtomicBoolean running = new AtomicBoolean(true);
        Thread sampler =
                new Thread(
                        () -> {
                            long nextGc = System.nanoTime() + 1_000_000_000L;
                            while (running.get()) {
                                peakUsed.accumulateAndGet(
                                        memory.getHeapMemoryUsage().getUsed(), Math::max);
                                if (System.nanoTime() >= nextGc) {
                                    long live = liveHeap(memory);
                                    samples.add(live);
                                    peakLive.accumulateAndGet(live, Math::max);
                                    nextGc = System.nanoTime() + 1_000_000_000L;
                                }
                                Instruments.sleepMicros(100_000);
                            }
                        },
                        "bench-heap-sampler");
        sampler.setDaemon(true);
        sampler.start();
        Drains.Run run;
        try {
            run = Drains.relay(env, store, new Instruments.NoopPublisher(), rows);
        } finally {
            running.set(false);
            try {
                sampler.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        env.log(
                String.format(
                        Locale.ROOT,
                        "memory %d rows: %,.0f msg/s, idle live %.1f MiB, peak live %.1f MiB,"
                                + " peak used %.1f MiB",
                        rows,
                        run.rate(),
                        idle / (double) MIB,
                        peakLive.get() / (double) MIB,
                        peakUsed.get() / (double) MIB));
        return new Peak(idle, peakLive.get(), peakUsed.get(), run.rate(), List.copyOf(samples));
    }

    /** Forces a full collection and returns the heap still in use: the live set. */
    static long liveHeap(MemoryMXBean memory) {
        memory.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }
}
