package io.outbox4j.benchmarks;

import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Drains a loaded table with the relay or with a hand-written loop, timing the run and every
 * statement.
 */
final class Drains {
    /**
     * Delivery timeout of every benchmark relay; the lease follows from it (a 500 batch still fits
     * 30 min).
     */
    static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(10);

    private static final AtomicInteger OWNERS = new AtomicInteger();

    private Drains() {}

    /**
     * One timed drain: messages, wall time, and the time spent in each claim and each
     * complete/delete.
     */
    record Run(long messages, long nanos, Timings claims, Timings completes, Cpu cpu) {
        double rate() {
            return Stats.perSecond(messages, nanos);
        }
    }

    /**
     * Where the wall time of several drains went: claim statements, complete/delete statements, and
     * the rest (for the relay: the engine's work and thread hand-offs between and inside batches;
     * for the hand-written loop: its own Java work). Answers "is it the SQL or the engine?" when
     * the relay is slower.
     */
    static final class Breakdown {
        private long wall;
        private long batches;
        private long messages;
        private long jvmCpu;
        private long dbCpu;
        private long allocated;
        private final Map<String, Long> threadCpu = new TreeMap<>();
        final Timings claims = new Timings();
        final Timings completes = new Timings();

        void add(Run run) {
            wall += run.nanos();
            batches += run.claims().size();
            messages += run.messages();
            jvmCpu += run.cpu().jvmNanos();
            allocated += run.cpu().allocatedBytes();
            dbCpu = dbCpu < 0 || run.cpu().dbNanos() < 0 ? -1 : dbCpu + run.cpu().dbNanos();
            run.cpu().threads().forEach((group, nanos) -> threadCpu.merge(group, nanos, Long::sum));
            claims.addAll(run.claims());
            completes.addAll(run.completes());
        }

        /**
         * CPU per message of this JVM and the PostgreSQL backends together, or of the JVM alone
         * when the backends' CPU could not be read.
         *
         * @return microseconds
         */
        double cpuPerMessage() {
            return (jvmCpu + Math.max(0, dbCpu)) / 1e3 / Math.max(1, messages);
        }

        /**
         * Adds the breakdown figures of one side to a result.
         *
         * @param r the result
         * @param key the figure key prefix, e.g. {@code relay}
         * @param label the side's label
         * @param completeLabel what its second statement is called
         */
        void report(Result r, String key, String label, String completeLabel) {
            double n = Math.max(1, batches);
            double claim = claims.totalNanos() / n / 1e6;
            double complete = completes.totalNanos() / n / 1e6;
            double all = wall / n / 1e6;
            r.figure(key + "_batch_ms", label + ": wall time per batch (mean)", all, "ms")
                    .figure(key + "_batch_claim_ms", label + ": of which claim (mean)", claim, "ms")
                    .figure(
                            key + "_batch_complete_ms",
                            label + ": of which " + completeLabel + " (mean)",
                            complete,
                            "ms")
                    .figure(
                            key + "_batch_other_ms",
                            label + ": of which elsewhere (mean)",
                            Math.max(0, all - claim - complete),
                            "ms");
            reportCpu(r, key, label);
        }

        /**
         * Adds the CPU and allocation figures of one side to a result (for a side whose statements
         * are not timed one by one, the only breakdown).
         *
         * @param r the result
         * @param key the figure key prefix, e.g. {@code gruelbox}
         * @param label the side's label
         */
        void reportCpu(Result r, String key, String label) {
            r.figure(
                    key + "_jvm_cpu_us_per_msg",
                    label + ": JVM CPU per message",
                    jvmCpu / 1e3 / Math.max(1, messages),
                    "µs");
            threadCpu.forEach(
                    (group, nanos) ->
                            r.figure(
                                    key + "_cpu_" + Cpu.key(group) + "_us_per_msg",
                                    label + ": of which " + group,
                                    nanos / 1e3 / Math.max(1, messages),
                                    "µs"));
            r.figure(
                    key + "_alloc_bytes_per_msg",
                    label + ": heap allocated per message",
                    allocated / (double) Math.max(1, messages),
                    "B");
            if (dbCpu >= 0) {
                r.figure(
                        key + "_db_cpu_us_per_msg",
                        label + ": PostgreSQL backend CPU per message",
                        dbCpu / 1e3 / Math.max(1, messages),
                        "µs");
            }
        }
    }

    /** What a hand-written loop does with each claimed batch before deleting it. */
    @FunctionalInterface
    interface Send {
        void send(List<HandWritten.Row> rows) throws Exception;
    }

    /**
     * Waits for a peer's latch, checking every 100 ms for a problem to report at once (a peer
     * retries a failed call only much later) and for the deadline.
     *
     * @param reached counted down when the peer reached its target
     * @param timeout how long at most
     * @param problems the peer's problems, or null
     * @param progress what the peer did so far, for the timeout's message
     * @throws InterruptedException if interrupted
     */
    static void awaitPeer(
            CountDownLatch reached,
            Duration timeout,
            Supplier<String> problems,
            Supplier<String> progress)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!reached.await(100, TimeUnit.MILLISECONDS)) {
            if (problems.get() != null) {
                throw new IllegalStateException("drain was not clean: " + problems.get());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(progress.get() + " within " + timeout);
            }
        }
        if (problems.get() != null) {
            throw new IllegalStateException("drain was not clean: " + problems.get());
        }
    }

    static Duration timeout(long messages) {
        return Duration.ofSeconds(120 + messages / 200);
    }

    /**
     * A relay builder with the engine's default settings (batch, workers, in-flight bound, wake-up
     * window, timeouts), an owner of its own and the scenario's observer. For experiments only,
     * environment variables override a default: {@code BENCH_RELAY_BATCH}, {@code
     * BENCH_RELAY_MIN_BATCH}, {@code BENCH_RELAY_IN_FLIGHT}, {@code BENCH_RELAY_WORKERS}, {@code
     * BENCH_RELAY_WAKE_UP_WINDOW_MS}; {@link #relaySettings()} names what was overridden.
     *
     * @param store the store (wrapped to time its calls)
     * @param publisher the publisher
     * @param owner the owner prefix
     * @param observer the observer
     * @return a builder
     */
    static Relay.Builder relayBuilder(
            OutboxStore store,
            Publisher publisher,
            String owner,
            io.outbox4j.api.Observer observer) {
        Relay.Builder b =
                Relay.builder(store, publisher)
                        .owner(owner + "-" + OWNERS.incrementAndGet())
                        .observer(observer);
        OVERRIDES.forEach(
                (name, setting) -> {
                    Integer value = env(name);
                    if (value != null) {
                        setting.accept(b, value);
                    }
                });
        return b;
    }

    /**
     * The relay settings of this run, for the configuration of a result.
     *
     * @return "defaults" and any override
     */
    static String relaySettings() {
        StringBuilder text =
                new StringBuilder(
                        "engine defaults (claims "
                                + Relay.DEFAULT_MIN_BATCH_SIZE
                                + " doubling to "
                                + Relay.DEFAULT_BATCH_SIZE
                                + ", in flight <= "
                                + Relay.DEFAULT_IN_FLIGHT_BATCHES
                                + " x batch, workers "
                                + Relay.DEFAULT_WORKERS
                                + ", wake-up window "
                                + Relay.DEFAULT_WAKE_UP_WINDOW.toMillis()
                                + " ms)");
        for (String name : OVERRIDES.keySet()) {
            if (env(name) != null) {
                text.append("; overridden: ").append(name).append('=').append(env(name));
            }
        }
        return text.toString();
    }

    /**
     * The relay settings an environment variable overrides, for experiments ({@link
     * #relayBuilder}), in the order {@link #relaySettings()} names them.
     */
    private static final Map<String, BiConsumer<Relay.Builder, Integer>> OVERRIDES = overrides();

    private static Map<String, BiConsumer<Relay.Builder, Integer>> overrides() {
        Map<String, BiConsumer<Relay.Builder, Integer>> settings = new LinkedHashMap<>();
        settings.put("BENCH_RELAY_BATCH", Relay.Builder::batchSize);
        settings.put("BENCH_RELAY_MIN_BATCH", Relay.Builder::minBatchSize);
        settings.put("BENCH_RELAY_IN_FLIGHT", Relay.Builder::maxInFlight);
        settings.put("BENCH_RELAY_WORKERS", Relay.Builder::workers);
        settings.put(
                "BENCH_RELAY_WAKE_UP_WINDOW_MS", (b, ms) -> b.wakeUpWindow(Duration.ofMillis(ms)));
        return Collections.unmodifiableMap(settings);
    }

    private static Integer env(String name) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? null : Integer.valueOf(v.strip());
    }

    /**
     * Drains {@code messages} with a running relay: from {@code start()} to the last completion
     * observed.
     *
     * @param env the environment (for the CPU meters)
     * @param store the store over the loaded table
     * @param publisher the publisher
     * @param messages how many completions to wait for
     * @return the run
     */
    static Run relay(Env env, OutboxStore store, Publisher publisher, long messages) {
        Instruments.Counter counter = new Instruments.Counter().expect(messages);
        Instruments.TimedStore timed = new Instruments.TimedStore(store);
        Relay relay = relayBuilder(timed, publisher, "bench-relay", counter).build();
        Cpu.Meter cpu = Cpu.start(env);
        long t0 = System.nanoTime();
        long t1;
        String problems;
        Cpu used;
        try {
            relay.start();
            t1 = counter.await(timeout(messages));
            // read while the relay's threads are alive; what happened before the target was reached
            // (closing
            // releases the batch in flight, which is fine)
            used = cpu.stop();
            problems = counter.problems();
        } finally {
            relay.close();
        }
        if (problems != null) {
            throw new IllegalStateException("relay drain was not clean: " + problems);
        }
        return new Run(messages, t1 - t0, timed.claims, timed.completes, used);
    }

    /**
     * Drains a table with the hand-written loop until a claim comes back empty.
     *
     * @param env the environment
     * @param table the loaded baseline table
     * @param batch the batch size
     * @param send what to do with each batch before deleting it
     * @return the run
     */
    static Run hand(Env env, String table, int batch, Send send) {
        try (HandWritten.Loop loop =
                new HandWritten.Loop(
                        env.pool(), table, "bench-hand", Duration.ofMinutes(5), batch)) {
            Cpu.Meter cpu = Cpu.start(env);
            long t0 = System.nanoTime();
            long[] drained = drainLoop(loop, send, t0);
            return new Run(drained[0], drained[1] - t0, loop.claims, loop.deletes, cpu.stop());
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "hand-written drain of " + table + " failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("hand-written send failed: " + e.getMessage(), e);
        }
    }

    /** Claims, sends and deletes until a claim comes back empty: {messages, time of the last}. */
    private static long[] drainLoop(HandWritten.Loop loop, Send send, long t0) throws Exception {
        long n = 0;
        long last = t0;
        while (true) {
            List<HandWritten.Row> rows = loop.claim();
            if (rows.isEmpty()) {
                return new long[] {n, last};
            }
            send.send(rows);
            loop.delete(rows);
            n += rows.size();
            last = System.nanoTime();
        }
    }

    /** Claim batch of the competent hand-written relay (issue 27, item 4). */
    static final int COMPETENT_BATCH = 500;

    /**
     * Drains a table with the competent hand-written relay (issue 27, item 4): {@code workers}
     * threads ({@code bench-competent-N}), each on its own connection claiming {@value
     * #COMPETENT_BATCH} rows with {@link HandWritten#competentClaimSql}, running {@code send} (all
     * workers share what it sends with, e.g. one producer), deleting with {@code id = ANY(?)},
     * until its claim comes back empty; timed from the start to the last delete of any worker.
     *
     * @param env the environment
     * @param table the loaded baseline table
     * @param workers worker threads
     * @param send what to do with each batch before deleting it
     * @return the run
     */
    static Run competent(Env env, String table, int workers, Send send) {
        Timings claims = new Timings();
        Timings deletes = new Timings();
        List<HandWritten.Loop> loops = new ArrayList<>();
        try {
            for (int i = 0; i < workers; i++) {
                loops.add(
                        new HandWritten.Loop(
                                env.pool(),
                                table,
                                "bench-competent-" + i,
                                Duration.ofMinutes(5),
                                COMPETENT_BATCH,
                                true,
                                claims,
                                deletes));
            }
            AtomicLong n = new AtomicLong();
            AtomicLong last = new AtomicLong();
            AtomicReference<Exception> failure = new AtomicReference<>();
            Cpu.Meter cpu = Cpu.start(env);
            long t0 = System.nanoTime();
            last.set(t0);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                HandWritten.Loop loop = loops.get(i);
                Thread t =
                        new Thread(
                                () -> {
                                    try {
                                        long[] drained = drainLoop(loop, send, t0);
                                        n.addAndGet(drained[0]);
                                        last.accumulateAndGet(drained[1], Math::max);
                                    } catch (Exception e) {
                                        failure.compareAndSet(null, e);
                                    }
                                },
                                "bench-competent-" + i);
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            Cpu used = cpu.stop();
            if (failure.get() != null) {
                throw new IllegalStateException(
                        "competent hand-written drain of "
                                + table
                                + " failed: "
                                + failure.get().getMessage(),
                        failure.get());
            }
            return new Run(n.get(), last.get() - t0, claims, deletes, used);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "competent hand-written drain of " + table + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            for (HandWritten.Loop loop : loops) {
                try {
                    loop.close();
                } catch (SQLException e) {
                    // the drain's outcome is what matters
                }
            }
        }
    }

    /**
     * A further side drained in the same rounds as the relay and the hand-written loop, from a
     * table of its own (e2e: the competent hand-written relay, gruelbox transaction-outbox,
     * namastack-outbox). It may drain fewer messages per round than the other sides (rates are per
     * second).
     *
     * @param label names the side in the log and the comparison
     * @param table its table, truncated, reloaded and settled with the other sides' tables
     * @param messages messages it drains per round
     * @param warmup messages it drains in the warm-up
     * @param load loads its table: (id prefix, unique per call; how many)
     * @param drain drains that many loaded messages, timed like the relay (start to last
     *     completion)
     * @param left counts what it left undone after a drain (must be 0)
     */
    record Peer(
            String label,
            String table,
            int messages,
            int warmup,
            BiConsumer<String, Integer> load,
            IntFunction<Run> drain,
            LongSupplier left) {}

    /**
     * What a side-by-side comparison measured: each side's rate per round and where its time went.
     */
    static final class Comparison {
        final List<Double> relayRates = new ArrayList<>();
        final List<Double> handRates = new ArrayList<>();
        final Breakdown relaySide = new Breakdown();
        final Breakdown handSide = new Breakdown();

        /** Each peer's rate per round, by label. */
        final Map<String, List<Double>> peerRates = new LinkedHashMap<>();

        /** Each peer's breakdown, by label. */
        final Map<String, Breakdown> peerSides = new LinkedHashMap<>();
    }

    /**
     * Warms every side up, then runs the rounds: every table reloaded with {@code n} messages (a
     * peer's with its own count), settled, drained by the relay, by the hand-written loop and by
     * the further sides; the order of the sides rotates from round to round, so each goes first as
     * often as the others.
     *
     * @param env the environment
     * @param name the scenario name, for the log
     * @param store the store over the subject table
     * @param subject the outbox4j table
     * @param hand the hand-written loop's table
     * @param publisher the relay's publisher
     * @param send what the hand-written loop does with each batch
     * @param n messages per round and side
     * @param warm messages per side in the warm-up
     * @param batch the batch size of the hand-written loop (the relay runs with its defaults)
     * @param payload payload bytes
     * @param rounds how many rounds
     * @param peers the further sides, none for the relay and the hand-written loop alone
     * @return the rates and breakdowns
     */
    static Comparison sideBySide(
            Env env,
            String name,
            OutboxStore store,
            String subject,
            String hand,
            Publisher publisher,
            Send send,
            int n,
            int warm,
            int batch,
            int payload,
            int rounds,
            List<Peer> peers) {
        env.log(name + ": warm-up with " + warm + " messages each side");
        env.load(subject, "w-", warm, payload, false);
        env.load(hand, "w-", warm, payload, false);
        relay(env, store, publisher, warm);
        hand(env, hand, batch, send);
        Comparison c = new Comparison();
        List<String> tables = new ArrayList<>(List.of(subject, hand));
        for (Peer peer : peers) {
            env.log(name + ": warm-up of " + peer.label() + " with " + peer.warmup() + " messages");
            peer.load().accept("w-", peer.warmup());
            var unused = peer.drain().apply(peer.warmup()); // a warm-up: its figures are not kept
            tables.add(peer.table());
            c.peerRates.put(peer.label(), new ArrayList<>());
            c.peerSides.put(peer.label(), new Breakdown());
        }
        String[] all = tables.toArray(new String[0]);
        int sides = tables.size();
        for (int round = 1; round <= rounds; round++) {
            env.execute("TRUNCATE " + String.join(", ", tables.stream().map(Env::q).toList()));
            env.load(subject, "r" + round + "-", n, payload, false);
            env.load(hand, "r" + round + "-", n, payload, false);
            for (Peer peer : peers) {
                peer.load().accept("r" + round + "-", peer.messages());
            }
            env.settle(all);
            for (int slot = 0; slot < sides; slot++) {
                // 0 = relay, 1 = hand-written, 2.. = peers; round 1 starts with the hand-written
                // loop
                int which = (slot + round) % sides;
                String label;
                Run run;
                if (which >= 2) {
                    Peer peer = peers.get(which - 2);
                    label = peer.label();
                    run = peer.drain().apply(peer.messages());
                    c.peerRates.get(label).add(run.rate());
                    c.peerSides.get(label).add(run);
                    long left = peer.left().getAsLong();
                    if (left != 0) {
                        throw new IllegalStateException(
                                label + " left " + left + " messages undone in " + peer.table());
                    }
                } else if (which == 0) {
                    label = "relay";
                    run = relay(env, store, publisher, n);
                    c.relayRates.add(run.rate());
                    c.relaySide.add(run);
                } else {
                    label = "hand-written";
                    run = hand(env, hand, batch, send);
                    if (run.messages() != n) {
                        throw new IllegalStateException(
                                "hand-written loop drained " + run.messages() + " of " + n);
                    }
                    c.handRates.add(run.rate());
                    c.handSide.add(run);
                }
                env.log(
                        String.format(
                                Locale.ROOT,
                                "%s round %d: %-12s %,10.0f msg/s",
                                name,
                                round,
                                label,
                                run.rate()));
            }
            if (env.count(subject) != 0) {
                throw new IllegalStateException(
                        "relay left " + env.count(subject) + " rows in " + subject);
            }
        }
        return c;
    }
}
