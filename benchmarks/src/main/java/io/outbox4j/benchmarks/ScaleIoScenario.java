package io.outbox4j.benchmarks;

import io.outbox4j.engine.Relay;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * Scale-out with an I/O-bound publisher: one PostgreSQL outbox drained by 1, 2, 4 and 8 relay
 * processes that are members of the outbox, and by 4 with membership off, each relay a JVM of its
 * own ({@link SleepRelayMain}: engine defaults, poll interval 100 ms) whose publisher only waits a
 * fixed time per call. The publisher costs no CPU, so a relay's rate is bounded by how many calls
 * it has in flight, and more relays should add rate until the database or the machine is the limit.
 * Each setup is started on an empty outbox and waited for until every relay has joined, warmed up
 * with a small drain; then the table is vacuumed and checkpointed, a backlog is committed at once
 * and timed until the outbox is empty. Besides the rate: database sessions running a statement and
 * waiting for a lock (pg_stat_activity every 50 ms), CPU per message of the relay processes and the
 * PostgreSQL backends, and row updates per message of the outbox table (claims, lease renewals,
 * parking and unparking) from {@code pg_stat_user_tables}.
 */
final class ScaleIoScenario {
    static final String SUBJECT = "scale_io_outbox";

    /** Relays of the membership-off setup (fewer when {@code scale-io-relays} is smaller). */
    static final int NO_MEMBERSHIP_RELAYS = 4;

    private ScaleIoScenario() {}

    /**
     * One configuration: {@code relays} processes, members or not, over {@code keys} keys, with the
     * relay's defaults or (the tuning series) another batch size, in-flight bound and workers.
     */
    record Setup(
            int relays, boolean membership, int keys, int batch, int maxInFlight, int workers) {
        Setup(int relays, boolean membership, int keys) {
            this(relays, membership, keys, 0, 0, 0);
        }

        boolean tuned() {
            return batch > 0;
        }

        String name() {
            return relays
                    + (relays == 1 ? " relay" : " relays")
                    + (membership ? "" : " (membership off)")
                    + (tuned()
                            ? " batch "
                                    + batch
                                    + " in flight "
                                    + maxInFlight
                                    + " workers "
                                    + workers
                            : "")
                    + ", "
                    + keys
                    + " keys";
        }

        String key() {
            return "keys_"
                    + keys
                    + "_relays_"
                    + relays
                    + (membership ? "" : "_no_membership")
                    + (tuned()
                            ? "_batch_" + batch + "_inflight_" + maxInFlight + "_workers_" + workers
                            : "");
        }
    }

    /**
     * The tuning series (one relay over the first key spread; {@code scale-io-tuning} 1): batch
     * size, in-flight bound and workers around the defaults (500, 1 000, 4), up to the relay tuned
     * to batch 1 000 with 8 000 messages in flight and 8 workers.
     */
    static final List<int[]> TUNINGS =
            List.of(
                    new int[] {100, 200, 4},
                    new int[] {1000, 2000, 4},
                    new int[] {500, 4000, 4},
                    new int[] {1000, 8000, 8});

    /**
     * What one timed drain measured.
     *
     * @param messages messages committed as the backlog
     * @param nanos from the commit to the outbox found empty
     * @param published messages the relays' publishers reported published meanwhile (more than
     *     {@code messages}: duplicates)
     * @param relayCpu CPU of the relay processes
     * @param dbCpu CPU of the benchmark database's backends, or -1
     * @param machineBusy the share of all cores busy (0..1), or -1
     * @param sessionsActive mean database sessions running a statement (samples every 50 ms)
     * @param sessionsWaiting mean of those waiting for a lock
     * @param rowUpdates rows of the outbox table updated ({@code n_tup_upd})
     * @param rowDeletes rows of the outbox table deleted ({@code n_tup_del})
     * @param counters the relays' other counters (released, abandoned, stale, store errors, ...)
     */
    record Drain(
            long messages,
            long nanos,
            long published,
            long relayCpu,
            long dbCpu,
            double machineBusy,
            double sessionsActive,
            double sessionsWaiting,
            long rowUpdates,
            long rowDeletes,
            Map<String, Long> counters) {
        double rate() {
            return Stats.perSecond(messages, nanos);
        }

        /** Relay plus database CPU per message (relay only when the database's is unknown). */
        double cpuPerMessageMicros() {
            return (relayCpu + Math.max(0, dbCpu)) / 1e3 / messages;
        }
    }

    static Result run(Env env) {
        Options o = env.options;
        int n = o.size("scale-io-messages");
        int payload = o.size("payload");
        int rounds = o.size("scale-io-rounds");
        int maxRelays = o.size("scale-io-relays");
        int sleepMs = o.size("scale-io-sleep-ms");
        List<Integer> spreads = List.of(Math.min(o.size("scale-io-keys"), n), n);
        int off = Math.min(NO_MEMBERSHIP_RELAYS, maxRelays);
        List<Setup> setups = new ArrayList<>();
        for (int keys : spreads.stream().distinct().toList()) {
            for (int k = 1; k <= maxRelays; k *= 2) {
                setups.add(new Setup(k, true, keys));
            }
            setups.add(new Setup(off, false, keys));
        }
        if (o.size("scale-io-tuning") > 0) {
            for (int[] t : TUNINGS) {
                setups.add(new Setup(1, true, spreads.get(0), t[0], t[1], t[2]));
            }
        }
        int warm = Math.max(100, n / 10);
        Result r =
                new Result(
                                "scale-io",
                                "Scale-out with an I/O-bound publisher: "
                                        + setups.stream()
                                                .filter(x -> x.membership() && x.keys() == n)
                                                .map(x -> Integer.toString(x.relays()))
                                                .collect(Collectors.joining("/"))
                                        + " member relay processes and "
                                        + off
                                        + " with membership off draining one PostgreSQL outbox,"
                                        + " publisher sleeping "
                                        + sleepMs
                                        + " ms per call")
                        .config("messages", n)
                        .config("warmup_messages_per_setup", warm)
                        .config("payload_bytes", payload)
                        .config("keys", spreads)
                        .config("rounds", rounds)
                        .config("publisher_sleep_ms_per_call", sleepMs)
                        .config(
                                "relay",
                                "SleepRelayMain in its own JVM (-Xmx256m): JdbiOutboxStore, engine"
                                        + " Relay with defaults except pollInterval 100ms, pool of "
                                        + SleepRelayMain.POOL_SIZE
                                        + " connections; membership(false) for the membership-off setup")
                        .config("cores", Runtime.getRuntime().availableProcessors());
        env.store(SUBJECT);
        Path logs = Path.of("target", "scale-io-logs");
        clear(logs); // the notes read this run's logs only
        Map<Setup, List<Drain>> drains = new LinkedHashMap<>();
        setups.forEach(s -> drains.put(s, new ArrayList<>()));
        for (int round = 1; round <= rounds; round++) {
            // rotate the order so no setup always runs first (or right after another)
            for (int i = 0; i < setups.size(); i++) {
                Setup s = setups.get((i + round - 1) % setups.size());
                Drain d = drain(env, s, "r" + round + "-", n, warm, payload, sleepMs, logs);
                drains.get(s).add(d);
                env.log(
                        String.format(
                                Locale.ROOT,
                                "scale-io round %d: %-36s %,9.0f msg/s  %.0f µs CPU/msg, %.2f"
                                        + " row updates/msg, lock waits %.2f of %.2f sessions%s",
                                round,
                                s.name(),
                                d.rate(),
                                d.cpuPerMessageMicros(),
                                d.rowUpdates() / (double) d.messages(),
                                d.sessionsWaiting(),
                                d.sessionsActive(),
                                d.published() == d.messages()
                                        ? ""
                                        : ", published " + d.published() + " of " + d.messages()));
            }
        }
        long left = env.count(SUBJECT);
        report(r, drains, spreads, maxRelays, off, left);
        logNotes(r, logs);
        env.execute(
                "DROP TABLE "
                        + Env.q(SUBJECT)
                        + ", "
                        + Env.q(SUBJECT + "_members")
                        + ", "
                        + Env.q(SUBJECT + "_buckets"));
        return r;
    }

    private static void report(
            Result r,
            Map<Setup, List<Drain>> drains,
            List<Integer> spreads,
            int maxRelays,
            int off,
            long left) {
        long lost = 0;
        long duplicates = 0;
        boolean dbKnown =
                drains.values().stream().flatMap(List::stream).allMatch(d -> d.dbCpu() >= 0);
        Map<Setup, double[]> summary = new HashMap<>(); // rate, speedup, waiting, cpu ratio
        Map<String, Long> other = new LinkedHashMap<>();
        List<String> headline = new ArrayList<>();
        for (Map.Entry<Setup, List<Drain>> e : drains.entrySet()) {
            Setup s = e.getKey();
            List<Drain> runs = e.getValue();
            List<Drain> one = drains.get(new Setup(1, true, s.keys()));
            String k = s.key();
            String name = s.name();
            double rate = median(runs, Drain::rate);
            double speedup = Stats.medianRatio(values(runs, Drain::rate), values(one, Drain::rate));
            double cpu = median(runs, Drain::cpuPerMessageMicros);
            double cpuRatio =
                    Stats.medianRatio(
                            values(runs, Drain::cpuPerMessageMicros),
                            values(one, Drain::cpuPerMessageMicros));
            double waiting = median(runs, Drain::sessionsWaiting);
            r.figure(k + "_msgs_per_s", name + ": drain rate (median)", rate, "msg/s")
                    .figure(
                            k + "_speedup",
                            name + ": rate / 1 relay's of the same round (median)",
                            speedup,
                            "x")
                    .figure(
                            k + "_sessions_active",
                            name + ": database sessions running a statement (median of means)",
                            median(runs, Drain::sessionsActive),
                            "")
                    .figure(
                            k + "_sessions_lock_waiting",
                            name + ": of which waiting for a lock (median of means)",
                            waiting,
                            "")
                    .figure(
                            k + "_relay_cpu_us_per_msg",
                            name + ": relay process CPU per message (median)",
                            median(runs, d -> d.relayCpu() / 1e3 / d.messages()),
                            "µs");
            if (dbKnown) {
                r.figure(
                        k + "_db_cpu_us_per_msg",
                        name + ": PostgreSQL backend CPU per message (median)",
                        median(runs, d -> d.dbCpu() / 1e3 / d.messages()),
                        "µs");
            }
            r.figure(
                            k + "_cpu_us_per_msg",
                            name
                                    + (dbKnown
                                            ? ": relay + PostgreSQL CPU per message (median)"
                                            : ": relay CPU per message (median; database's unknown)"),
                            cpu,
                            "µs")
                    .figure(
                            k + "_cpu_ratio",
                            name + ": CPU per message / 1 relay's of the same round (median)",
                            cpuRatio,
                            "x")
                    .figure(
                            k + "_row_updates_per_msg",
                            name + ": outbox row updates per message (n_tup_upd, median)",
                            median(runs, d -> d.rowUpdates() / (double) d.messages()),
                            "")
                    .figure(
                            k + "_row_deletes_per_msg",
                            name + ": outbox row deletes per message (n_tup_del, median)",
                            median(runs, d -> d.rowDeletes() / (double) d.messages()),
                            "")
                    .figure(
                            k + "_msgs_per_call",
                            name + ": messages per publisher call (median)",
                            median(
                                    runs,
                                    d ->
                                            d.counters().getOrDefault("published", 0L)
                                                    / (double)
                                                            Math.max(
                                                                    1,
                                                                    d.counters()
                                                                            .getOrDefault(
                                                                                    "calls", 0L))),
                            "")
                    .figure(
                            k + "_machine_busy_pct",
                            name + ": all cores busy (median)",
                            100 * median(runs, Drain::machineBusy),
                            "%");
            for (Drain d : runs) {
                lost += Math.max(0, d.messages() - d.published());
                duplicates += Math.max(0, d.published() - d.messages());
            }
            r.config(k + "_rates", DrainScenario.rounded(values(runs, Drain::rate)));
            for (Drain d : runs) {
                d.counters()
                        .forEach(
                                (c, v) -> {
                                    if (!c.equals("published")
                                            && !c.equals("calls")
                                            && !c.equals("completed")
                                            && v != 0) {
                                        other.merge(c, v, Long::sum);
                                    }
                                });
            }
            summary.put(s, new double[] {rate, speedup, waiting, cpuRatio});
            headline.add(name + " " + Result.fmt(rate));
        }
        for (int keys : spreads.stream().distinct().toList()) {
            String spread = keys + " keys";
            for (int k : List.of(4, 2)) {
                double[] v = summary.get(new Setup(k, true, keys));
                if (v != null && k <= maxRelays) {
                    r.check(k + " relays / 1 relay, " + spread, v[1], ">=", k == 4 ? 3.4 : 1.8);
                }
            }
            int most = maxRelays >= 4 ? 4 : Integer.highestOneBit(maxRelays);
            double[] many = summary.get(new Setup(most, true, keys));
            double[] one = summary.get(new Setup(1, true, keys));
            if (most > 1) {
                r.check(
                        "lock-waiting sessions, " + most + " relays (<= 1 relay's), " + spread,
                        many[2],
                        "<=",
                        one[2]);
                r.check("CPU/msg " + most + " relays / 1 relay, " + spread, many[3], "<=", 1.3);
            }
        }
        for (Setup s : summary.keySet().stream().filter(Setup::tuned).toList()) {
            double ratio =
                    Stats.medianRatio(
                            values(drains.get(s), Drain::rate),
                            values(drains.get(new Setup(1, true, s.keys())), Drain::rate));
            r.figure(
                    s.key() + "_vs_defaults",
                    s.name() + ": rate / the defaults' of the same round (median)",
                    ratio,
                    "x");
            // tuning up (nothing below the defaults) must never drain below 0.8x the defaults;
            // fewer messages in flight than the defaults caps the rate by itself
            if (s.batch() >= Relay.DEFAULT_BATCH_SIZE
                    && s.maxInFlight() >= Relay.DEFAULT_BATCH_SIZE * Relay.DEFAULT_IN_FLIGHT_BATCHES
                    && s.workers() >= Relay.DEFAULT_WORKERS) {
                r.check(s.name() + " / defaults", ratio, ">=", 0.8);
            }
        }
        r.note(
                other.isEmpty()
                        ? "relay outcomes: every message completed at its first try (no release,"
                                + " abandon, stale lease, dead letter or store error in any drain)"
                        : "relay outcomes other than completed (all drains): " + other);
        r.figure("duplicates", "messages published twice (all drains)", (double) duplicates, "")
                .figure("rows_left", "rows left in the outbox after all drains", (double) left, "")
                .check("messages committed but not published (all drains)", (double) lost, "<=", 0)
                .check("rows left in the outbox after all drains", (double) left, "<=", 0);
        r.headline(
                String.join(", ", headline) + " msg/s",
                "speedups against 1 relay with as many keys, same round");
        if (off < NO_MEMBERSHIP_RELAYS) {
            r.note(
                    "membership-off setup with "
                            + off
                            + " relays (scale-io-relays is "
                            + maxRelays
                            + ")");
        }
    }

    /** Deletes the logs and state files of an earlier run. */
    private static void clear(Path logs) {
        if (!Files.isDirectory(logs)) {
            return;
        }
        try (var files = Files.list(logs)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".log") || name.endsWith(".state")) {
                    Files.delete(f);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot clear " + logs + ": " + e, e);
        }
    }

    /** Notes what the relays logged beyond their start and stop lines (warnings, errors). */
    private static void logNotes(Result r, Path logs) {
        int warnings = 0;
        String first = null;
        try (var files = Files.list(logs)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".log")).sorted().toList()) {
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    if (line.contains("WARN")
                            || line.contains("ERROR")
                            || line.contains("Exception")
                            || line.startsWith("store error")) {
                        warnings++;
                        if (first == null) {
                            first = f.getFileName() + ": " + line;
                        }
                    }
                }
            }
        } catch (IOException e) {
            r.note("relay logs not read: " + e);
            return;
        }
        r.note(
                warnings == 0
                        ? "relay logs: no warnings or errors"
                        : "relay logs: "
                                + warnings
                                + " warning/error lines in "
                                + logs
                                + ", the first: "
                                + first);
    }

    private static List<Double> values(List<Drain> runs, ToDoubleFunction<Drain> f) {
        return runs.stream().map(d -> f.applyAsDouble(d)).collect(Collectors.toList());
    }

    private static double median(List<Drain> runs, ToDoubleFunction<Drain> f) {
        return Stats.median(values(runs, f));
    }

    /**
     * Starts the relays of a setup, waits until every one has joined, warms them up with a small
     * drain, times the drain of a backlog of {@code n} and stops them again.
     */
    private static Drain drain(
            Env env, Setup s, String prefix, int n, int warm, int payload, int sleepMs, Path logs) {
        List<SleepRelay> relays = new ArrayList<>();
        String tag = prefix + s.key().replace('_', '-');
        try {
            for (int i = 0; i < s.relays(); i++) {
                relays.add(SleepRelay.start(env, tag + "-relay-" + (i + 1), logs, sleepMs, s));
            }
            for (SleepRelay relay : relays) {
                relay.awaitReady();
            }
            int members = s.membership() ? s.relays() : 0;
            long deadline = System.nanoTime() + ChildJvms.START_TIMEOUT.toNanos();
            while (env.queryLong("SELECT count(*) FROM " + Env.q(SUBJECT + "_members"))
                    != members) {
                relays.forEach(SleepRelay::checkAlive);
                pause(
                        deadline,
                        50,
                        () ->
                                "waiting for "
                                        + members
                                        + " members, "
                                        + env.queryLong(
                                                "SELECT count(*) FROM "
                                                        + Env.q(SUBJECT + "_members"))
                                        + " now");
            }
            timed(env, relays, prefix + "w-", warm, payload, s.keys());
            // as in the other scenarios: no setup inherits another's dead tuples or dirty pages
            env.settle(SUBJECT);
            return timed(env, relays, prefix, n, payload, s.keys());
        } finally {
            relays.forEach(SleepRelay::signal);
            relays.forEach(SleepRelay::stop);
        }
    }

    /** Commits {@code n} messages at once and waits until the running relays drained them. */
    private static Drain timed(
            Env env, List<SleepRelay> relays, String prefix, int n, int payload, int keys) {
        List<Long> pids = relays.stream().map(x -> x.process.pid()).toList();
        Map<String, Long> counters0 = sync(relays);
        long[] rows0 = tableStatistics(env);
        env.load(SUBJECT, prefix, n, payload, false, keys); // one statement: committed at once
        long t0 = System.nanoTime();
        long relay0 = ChildJvms.processCpu(pids);
        long db0 = env.databaseCpuNanos();
        long[] machine0 = ChildJvms.machineTicks();
        long deadline = t0 + Drains.timeout(n).toNanos();
        double active = 0;
        double waiting = 0;
        int samples = 0;
        long lastSample = 0;
        String empty = "SELECT (NOT EXISTS (SELECT 1 FROM " + Env.q(SUBJECT) + "))::int";
        while (true) {
            long now = System.nanoTime();
            if (now - lastSample >= 50_000_000L) {
                double[] sessions = ChildJvms.sessions(env);
                active += sessions[0];
                waiting += sessions[1];
                samples++;
                lastSample = now;
            }
            if (env.queryLong(empty) == 1) {
                break;
            }
            relays.forEach(SleepRelay::checkAlive);
            pause(deadline, 10, () -> env.count(SUBJECT) + " rows left in the outbox");
        }
        long t1 = System.nanoTime();
        long db1 = db0 < 0 ? -1 : env.databaseCpuNanos();
        long[] machine1 = ChildJvms.machineTicks();
        long relay1 = ChildJvms.processCpu(pids);
        Map<String, Long> counters1 = sync(relays);
        long[] rows1 = tableStatistics(env);
        Map<String, Long> delta = new LinkedHashMap<>();
        counters1.forEach((k, v) -> delta.put(k, v - counters0.getOrDefault(k, 0L)));
        return new Drain(
                n,
                t1 - t0,
                delta.getOrDefault("published", 0L),
                relay1 - relay0,
                db1 < 0 ? -1 : db1 - db0,
                ChildJvms.busy(machine0, machine1),
                active / Math.max(1, samples),
                waiting / Math.max(1, samples),
                rows1[0] - rows0[0],
                rows1[1] - rows0[1],
                delta);
    }

    /**
     * Asks every relay to flush its connections' pending statistics and report its counters;
     * returns their sums.
     */
    private static Map<String, Long> sync(List<SleepRelay> relays) {
        relays.forEach(SleepRelay::requestSync);
        Map<String, Long> sum = new LinkedHashMap<>();
        for (SleepRelay relay : relays) {
            relay.awaitSync().forEach((k, v) -> sum.merge(k, v, Long::sum));
        }
        return sum;
    }

    /** {rows updated, rows deleted} of the outbox table so far. */
    private static long[] tableStatistics(Env env) {
        String where = " FROM pg_stat_user_tables WHERE relid = '" + SUBJECT + "'::regclass";
        return new long[] {
            env.queryLong("SELECT n_tup_upd" + where), env.queryLong("SELECT n_tup_del" + where)
        };
    }

    private static void pause(long deadline, long millis, java.util.function.Supplier<String> why) {
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException("scale-io: did not finish in time: " + why.get());
        }
        ChildJvms.sleep(millis);
    }

    /** A {@link SleepRelayMain} process over the scale-io outbox. */
    private static final class SleepRelay {
        final Process process;
        final String name;
        final Path log;
        final Path state;
        private long requested;

        private SleepRelay(Process process, String name, Path log, Path state) {
            this.process = process;
            this.name = name;
            this.log = log;
            this.state = state;
        }

        static SleepRelay start(Env env, String name, Path logs, int sleepMs, Setup s) {
            Env.Database db = env.database();
            Path state = logs.resolve(name + ".state").toAbsolutePath();
            try {
                Files.createDirectories(logs);
                Files.deleteIfExists(state);
            } catch (IOException e) {
                throw new IllegalStateException("cannot prepare " + state + ": " + e, e);
            }
            Map<String, String> e = new HashMap<>();
            e.put("BENCH_DB_URL", db.url());
            e.put("BENCH_DB_USER", db.user());
            e.put("BENCH_DB_PASSWORD", db.password());
            List<String> command =
                    new ArrayList<>(
                            List.of(
                                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                                    SleepRelayMain.class.getName(),
                                    "--table",
                                    SUBJECT,
                                    "--owner",
                                    "bench-" + name,
                                    "--sleep-ms",
                                    Integer.toString(sleepMs),
                                    "--state",
                                    state.toString()));
            if (!s.membership()) {
                command.add("--no-membership");
            }
            if (s.tuned()) {
                command.addAll(
                        List.of(
                                "--batch-size",
                                Integer.toString(s.batch()),
                                "--max-in-flight",
                                Integer.toString(s.maxInFlight()),
                                "--workers",
                                Integer.toString(s.workers())));
            }
            Process p =
                    ChildJvms.java(
                            "scale-io-" + name, "256m", e, logs, command.toArray(String[]::new));
            return new SleepRelay(p, name, ChildJvms.log(logs, "scale-io-" + name), state);
        }

        void awaitReady() {
            ChildJvms.await(process, () -> Files.exists(state), log, "relay " + name);
        }

        void checkAlive() {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "relay "
                                + name
                                + " exited with "
                                + process.exitValue()
                                + ":\n"
                                + ChildJvms.tail(log));
            }
        }

        void requestSync() {
            requested++;
            try {
                OutputStream in = process.getOutputStream();
                in.write(("sync " + requested + "\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
            } catch (IOException e) {
                throw new IllegalStateException("relay " + name + " not reachable: " + e, e);
            }
        }

        /** Waits for the answer to the last request: the relay's counters. */
        Map<String, Long> awaitSync() {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (true) {
                Map<String, Long> answer = read();
                if (answer != null && answer.get("seq") >= requested) {
                    answer.remove("seq");
                    return answer;
                }
                checkAlive();
                pause(deadline, 5, () -> "relay " + name + " did not answer sync " + requested);
            }
        }

        private Map<String, Long> read() {
            String text;
            try {
                text = Files.readString(state, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                return null;
            }
            String[] w = text.split("\\s+", -1);
            Map<String, Long> m = new LinkedHashMap<>();
            m.put("seq", Long.parseLong(w[0]));
            for (int i = 1; i < w.length; i++) {
                String[] kv = w[i].split("=", 2);
                m.put(kv[0], Long.parseLong(kv[1]));
            }
            return m;
        }

        /** Sends SIGTERM (all relays of a setup are signalled before any is waited for). */
        void signal() {
            process.destroy();
        }

        void stop() {
            ChildJvms.stop(process);
        }
    }
}
