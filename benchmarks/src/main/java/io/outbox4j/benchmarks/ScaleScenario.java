package io.outbox4j.benchmarks;

import io.outbox4j.testservices.ServerSupport;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/**
 * Scale-out: one PostgreSQL outbox drained by 1, 2 and 4 standalone relays ({@code outbox4j relay},
 * each a JVM of its own, engine defaults) and by the Kafka Connect source connector with 1 and 3
 * tasks (one standalone Connect worker JVM), all publishing to the same Kafka broker. Each
 * configuration is started on an empty outbox and warmed up with a small drain; then the table is
 * vacuumed and checkpointed, a backlog is committed at once and timed until the outbox is empty.
 * Besides the rate, the scenario meters where the CPU went (the relay or worker processes, the
 * PostgreSQL backends of the benchmark database, this JVM, which hosts the in-JVM Kafka broker when
 * no external one is given, and the whole machine) and samples how many of the database's sessions
 * were running or waiting for a lock: the evidence for where the curve flattens.
 */
final class ScaleScenario {
    static final String SUBJECT = "scale_outbox";

    /** Partitions of the Kafka topic the messages go to (keys spread over them). */
    static final int PARTITIONS = 4;

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private ScaleScenario() {}

    /** What drains the outbox in a setup. */
    enum Kind {
        RELAY,
        CONNECTOR,
        NAMASTACK
    }

    /**
     * One configuration: {@code count} relay processes, one connector with {@code count} tasks, or
     * {@code count} namastack-outbox instances (each its own JVM, {@link NamastackMain}), draining
     * messages spread over {@code keys} keys.
     */
    record Setup(Kind kind, int count, int keys) {
        String name() {
            String n =
                    switch (kind) {
                        case CONNECTOR -> "connector, " + count + (count == 1 ? " task" : " tasks");
                        case NAMASTACK ->
                                "namastack, " + count + (count == 1 ? " instance" : " instances");
                        default -> count + (count == 1 ? " relay" : " relays");
                    };
            return n + ", " + keys + " keys";
        }

        String key() {
            return "keys_"
                    + keys
                    + "_"
                    + switch (kind) {
                        case CONNECTOR -> "connector_" + count + "_tasks";
                        case NAMASTACK -> "namastack_" + count;
                        default -> "relays_" + count;
                    };
        }

        boolean connector() {
            return kind == Kind.CONNECTOR;
        }

        /** The setup this one's speedup is against: 1 relay, or 1 namastack instance. */
        Setup one() {
            return new Setup(kind == Kind.NAMASTACK ? Kind.NAMASTACK : Kind.RELAY, 1, keys);
        }
    }

    /**
     * What one timed drain measured.
     *
     * @param messages messages committed as the backlog
     * @param nanos from the commit to the outbox found empty
     * @param published records the topic gained meanwhile (more than {@code messages}: duplicates)
     * @param processCpu CPU of the relay or worker processes
     * @param dbCpu CPU of the benchmark database's backends, or -1
     * @param jvmCpu CPU of this JVM (the in-JVM broker, the samplers)
     * @param machineBusy the share of all cores busy (0..1), or -1
     * @param sessionsActive mean database sessions running a statement (samples every 50 ms)
     * @param sessionsWaiting mean of those waiting for a lock
     */
    record Drain(
            long messages,
            long nanos,
            long published,
            long processCpu,
            long dbCpu,
            long jvmCpu,
            double machineBusy,
            double sessionsActive,
            double sessionsWaiting) {
        double rate() {
            return Stats.perSecond(messages, nanos);
        }
    }

    static Result run(Env env) {
        Options o = env.options;
        int n = o.size("scale-messages");
        int payload = o.size("payload");
        int rounds = o.size("scale-rounds");
        // few keys (many messages per key: per-key order limits what can run in parallel), and
        // one message per key (nothing waits behind anything)
        List<Integer> spreads = List.of(Math.min(o.size("scale-keys"), n), n);
        List<Setup> setups = new ArrayList<>();
        for (int keys : spreads) {
            for (int k = 1; k <= o.size("scale-relays"); k *= 2) {
                setups.add(new Setup(Kind.RELAY, k, keys));
            }
            setups.add(new Setup(Kind.CONNECTOR, 1, keys));
            if (o.size("scale-tasks") > 1) {
                setups.add(new Setup(Kind.CONNECTOR, o.size("scale-tasks"), keys));
            }
            // the peer (issue 27): namastack-outbox with 1 and with the most instances
            int instances = o.size("scale-namastack");
            if (instances > 0) {
                setups.add(new Setup(Kind.NAMASTACK, 1, keys));
            }
            if (instances > 1) {
                setups.add(new Setup(Kind.NAMASTACK, instances, keys));
            }
        }
        int warm = Math.max(100, n / 10);
        Result r =
                new Result(
                                "scale",
                                "Scale-out: 1/2/4 relay processes and the Kafka Connect connector with 1/3"
                                        + " tasks draining one PostgreSQL outbox to Kafka")
                        .config("messages", n)
                        .config("warmup_messages_per_setup", warm)
                        .config("payload_bytes", payload)
                        .config("keys", spreads)
                        .config("rounds", rounds)
                        .config("kafka_topic_partitions", PARTITIONS)
                        .config(
                                "relay",
                                "outbox4j relay in its own JVM (-Xmx512m), engine defaults,"
                                        + " relay.poll-interval=100ms (default 1s: the idle wait"
                                        + " before a backlog is seen)")
                        .config(
                                "connector",
                                "one standalone Connect worker JVM (-Xmx1g), connector defaults,"
                                        + " poll.interval.ms=100, producer acks=all + idempotence")
                        .config(
                                "namastack",
                                "namastack-outbox "
                                        + Namastack.VERSION
                                        + " instances, each its own JVM (-Xmx512m, a pool of "
                                        + NamastackMain.POOL_SIZE
                                        + "), partitioning on (256 partitions shared by the"
                                        + " instances), its schema, its defaults plus "
                                        + Namastack.SETTINGS
                                        + "; handler: producer.send(record).get(); backlog"
                                        + " inserted in one statement as its schedule() writes it"
                                        + " (record_type, JSON payload, partition_no from its"
                                        + " hash, handler_id), timed until every record is"
                                        + " COMPLETED")
                        .config("cores", Runtime.getRuntime().availableProcessors());
        env.store(SUBJECT);
        if (o.size("scale-namastack") > 0) {
            Namastack.dropTables(env);
            Namastack.createTables(env);
        }
        env.kafka().createTopic(Env.TOPIC, PARTITIONS, Map.of());
        Path logs = Path.of("target", "scale-logs");
        Map<Setup, List<Drain>> drains = new LinkedHashMap<>();
        setups.forEach(s -> drains.put(s, new ArrayList<>()));
        try (ConnectWorker worker = ConnectWorker.start(env, logs)) {
            for (int round = 1; round <= rounds; round++) {
                // rotate the order so no setup always runs first (or right after the load)
                for (int i = 0; i < setups.size(); i++) {
                    Setup s = setups.get((i + round - 1) % setups.size());
                    Drain d = drain(env, worker, s, "r" + round + "-", n, warm, payload, logs);
                    drains.get(s).add(d);
                    env.log(
                            String.format(
                                    Locale.ROOT,
                                    "scale round %d: %-20s %,9.0f msg/s  db %.2f cores, lock waits %.1f of %.1f sessions",
                                    round,
                                    s.name(),
                                    d.rate(),
                                    d.dbCpu() / (double) d.nanos(),
                                    d.sessionsWaiting(),
                                    d.sessionsActive()));
                }
            }
        }
        report(r, drains);
        env.execute("DROP TABLE " + Env.q(SUBJECT));
        Namastack.dropTables(env);
        return r;
    }

    private static void report(Result r, Map<Setup, List<Drain>> drains) {
        long lost = 0;
        long duplicates = 0;
        StringBuilder curve = new StringBuilder();
        for (Map.Entry<Setup, List<Drain>> e : drains.entrySet()) {
            Setup s = e.getKey();
            double one = Stats.median(rates(drains.get(s.one())));
            List<Drain> runs = e.getValue();
            double rate = Stats.median(rates(runs));
            String k = s.key();
            String name = s.name();
            long nanos = runs.stream().mapToLong(Drain::nanos).sum();
            r.figure(k + "_msgs_per_s", name + ": drain rate (median)", rate, "msg/s")
                    .figure(
                            k + "_speedup",
                            name
                                    + (s.kind() == Kind.NAMASTACK
                                            ? ": rate / 1 namastack instance's (medians)"
                                            : ": rate / 1 relay's (medians)"),
                            rate / one,
                            "x")
                    .figure(
                            k + "_process_cpu_us_per_msg",
                            name + ": relay/worker process CPU per message",
                            perMessage(runs, Drain::processCpu),
                            "µs");
            if (runs.stream().allMatch(d -> d.dbCpu() >= 0)) {
                r.figure(
                                k + "_db_cpu_us_per_msg",
                                name + ": PostgreSQL backend CPU per message",
                                perMessage(runs, Drain::dbCpu),
                                "µs")
                        .figure(
                                k + "_db_cores",
                                name + ": PostgreSQL cores busy (CPU time / wall time)",
                                runs.stream().mapToLong(Drain::dbCpu).sum() / (double) nanos,
                                "cores");
            }
            r.figure(
                            k + "_jvm_cpu_us_per_msg",
                            name + ": benchmark JVM CPU per message (in-JVM broker, samplers)",
                            perMessage(runs, Drain::jvmCpu),
                            "µs")
                    .figure(
                            k + "_machine_busy_pct",
                            name + ": all cores busy (mean over drains)",
                            100
                                    * runs.stream()
                                            .mapToDouble(Drain::machineBusy)
                                            .average()
                                            .orElse(-1),
                            "%")
                    .figure(
                            k + "_sessions_active",
                            name + ": database sessions running a statement (mean of samples)",
                            runs.stream().mapToDouble(Drain::sessionsActive).average().orElse(0),
                            "")
                    .figure(
                            k + "_sessions_lock_waiting",
                            name + ": of which waiting for a lock",
                            runs.stream().mapToDouble(Drain::sessionsWaiting).average().orElse(0),
                            "");
            for (Drain d : runs) {
                lost += Math.max(0, d.messages() - d.published());
                duplicates += Math.max(0, d.published() - d.messages());
            }
            r.config(k + "_rates", DrainScenario.rounded(rates(runs)));
            if (s.kind() != Kind.CONNECTOR) {
                r.peer(
                        "scale, "
                                + s.keys()
                                + " keys: "
                                + s.count()
                                + (s.count() == 1 ? " process" : " processes")
                                + " (own JVMs), msg/s (median)",
                        s.kind() == Kind.NAMASTACK ? Report.NAMASTACK : Report.OUTBOX4J,
                        Result.fmt(rate));
            }
            curve.append(curve.length() == 0 ? "" : ", ")
                    .append(name)
                    .append(' ')
                    .append(Result.fmt(rate));
        }
        r.figure("duplicates", "records published twice (all drains)", (double) duplicates, "")
                .check("messages committed but not published (all drains)", (double) lost, "<=", 0);
        r.headline(curve + " msg/s", "speedups against 1 relay with as many keys in the table");
    }

    private static List<Double> rates(List<Drain> runs) {
        return runs.stream().map(Drain::rate).collect(Collectors.toList());
    }

    private static double perMessage(
            List<Drain> runs, java.util.function.ToLongFunction<Drain> nanos) {
        long msgs = runs.stream().mapToLong(Drain::messages).sum();
        return runs.stream().mapToLong(nanos).sum() / 1e3 / Math.max(1, msgs);
    }

    /**
     * Starts the setup (relay processes, or the connector on the worker), warms it up with a small
     * drain, times the drain of a backlog of {@code n} and stops it again.
     */
    private static Drain drain(
            Env env,
            ConnectWorker worker,
            Setup s,
            String prefix,
            int n,
            int warm,
            int payload,
            Path logs) {
        List<StandaloneRelay> relays = new ArrayList<>();
        List<Process> instances = new ArrayList<>();
        String connector = s.key().replace('_', '-') + "-" + prefix.replace("-", "");
        try {
            List<Long> pids = new ArrayList<>();
            if (s.connector()) {
                worker.create(connector, s.count(), env.database());
                pids.add(worker.process.pid());
            } else if (s.kind() == Kind.NAMASTACK) {
                env.execute("TRUNCATE " + Namastack.TABLE);
                for (int i = 0; i < s.count(); i++) {
                    instances.add(namastackInstance(env, prefix + "namastack-" + (i + 1), logs));
                }
                for (int i = 0; i < instances.size(); i++) {
                    Process p = instances.get(i);
                    Path log = ChildJvms.log(logs, "scale-" + prefix + "namastack-" + (i + 1));
                    ChildJvms.await(
                            p,
                            () -> ChildJvms.tail(log).contains(NamastackMain.READY),
                            log,
                            "namastack instance " + (i + 1));
                    pids.add(p.pid());
                }
            } else {
                for (int i = 0; i < s.count(); i++) {
                    relays.add(
                            StandaloneRelay.start(
                                    env,
                                    "scale-" + prefix + "relay-" + (i + 1),
                                    SUBJECT,
                                    "100ms",
                                    logs));
                }
                for (StandaloneRelay relay : relays) {
                    relay.awaitReady();
                    pids.add(relay.process().pid());
                }
            }
            boolean ns = s.kind() == Kind.NAMASTACK;
            timed(env, ns, prefix + "w-", warm, payload, s.keys(), pids);
            // as in the other scenarios: no setup inherits another's dead tuples or dirty pages
            env.settle(ns ? Namastack.TABLE : SUBJECT);
            return timed(env, ns, prefix, n, payload, s.keys(), pids);
        } finally {
            if (s.connector()) {
                worker.delete(connector);
            }
            relays.forEach(StandaloneRelay::stop);
            instances.forEach(ChildJvms::stop);
        }
    }

    /**
     * Commits {@code n} messages at once (to namastack's table for its instances) and waits until
     * the running relays drained them.
     */
    private static Drain timed(
            Env env,
            boolean namastack,
            String prefix,
            int n,
            int payload,
            int keys,
            List<Long> pids) {
        long offsets0 = endOffsets(env);
        // one statement: committed at once
        if (namastack) {
            Namastack.loadAtOnce(env, prefix, n, payload, keys);
        } else {
            env.load(SUBJECT, prefix, n, payload, false, keys);
        }
        long t0 = System.nanoTime();
        long process0 = ChildJvms.processCpu(pids);
        long db0 = env.databaseCpuNanos();
        long jvm0 = OS.getProcessCpuTime();
        long[] machine0 = ChildJvms.machineTicks();
        long deadline = t0 + Drains.timeout(n).toNanos();
        double active = 0;
        double waiting = 0;
        int samples = 0;
        long published;
        // first wait for the topic to have them all (cheap to ask), then for the outbox to be
        // empty (a count over the deleted rows, asked often only at the end)
        while (true) {
            double[] sessions = ChildJvms.sessions(env);
            active += sessions[0];
            waiting += sessions[1];
            samples++;
            published = endOffsets(env) - offsets0;
            if (published >= n) {
                break;
            }
            pause(deadline, 50, () -> "only " + (endOffsets(env) - offsets0) + " of " + n);
        }
        java.util.function.LongSupplier left =
                namastack ? () -> Namastack.incomplete(env) : () -> env.count(SUBJECT);
        while (left.getAsLong() > 0) {
            pause(deadline, 10, () -> left.getAsLong() + " messages left in the outbox");
        }
        long t1 = System.nanoTime();
        long db1 = db0 < 0 ? -1 : env.databaseCpuNanos();
        long[] machine1 = ChildJvms.machineTicks();
        return new Drain(
                n,
                t1 - t0,
                endOffsets(env) - offsets0,
                ChildJvms.processCpu(pids) - process0,
                db1 < 0 ? -1 : db1 - db0,
                OS.getProcessCpuTime() - jvm0,
                ChildJvms.busy(machine0, machine1),
                active / samples,
                waiting / samples);
    }

    private static void pause(long deadline, long millis, java.util.function.Supplier<String> why) {
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException("scale: drain did not finish in time: " + why.get());
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Records in the topic so far (sum of its partitions' end offsets). */
    private static long endOffsets(Env env) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            latest.put(new TopicPartition(Env.TOPIC, p), OffsetSpec.latest());
        }
        try {
            return env
                    .kafka()
                    .admin()
                    .listOffsets(latest)
                    .all()
                    .get(30, TimeUnit.SECONDS)
                    .values()
                    .stream()
                    .mapToLong(i -> i.offset())
                    .sum();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException(
                    "reading the end offsets of " + Env.TOPIC + ": " + e, e);
        }
    }

    static int get(String url) {
        try {
            return HTTP.send(
                            HttpRequest.newBuilder(URI.create(url))
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Waits until a process answers {@code url} with 200, failing with its log when it dies. */
    private static void await(Process p, String url, Path log, String what) {
        ChildJvms.await(p, () -> get(url) == 200, log, what);
    }

    /** Starts one namastack-outbox instance in a JVM of its own ({@link NamastackMain}). */
    private static Process namastackInstance(Env env, String name, Path logs) {
        Env.Database db = env.database();
        Map<String, String> e = new HashMap<>();
        e.put("BENCH_DB_URL", db.url());
        e.put("BENCH_DB_USER", db.user());
        e.put("BENCH_DB_PASSWORD", db.password());
        e.put("BENCH_KAFKA_BOOTSTRAP", env.kafka().bootstrapServers());
        e.put("BENCH_KAFKA_TOPIC", Env.TOPIC);
        return ChildJvms.java(
                "scale-" + name,
                "512m",
                e,
                logs,
                true,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                NamastackMain.class.getName());
    }

    /** One standalone Kafka Connect worker, the outbox connector on its class path. */
    private static final class ConnectWorker implements AutoCloseable {
        final Process process;
        final String rest;

        private ConnectWorker(Process process, String rest) {
            this.process = process;
            this.rest = rest;
        }

        static ConnectWorker start(Env env, Path logs) {
            int port = ServerSupport.freePort();
            try {
                Files.createDirectories(logs);
                Path props = logs.resolve("connect-worker.properties");
                Path offsets = logs.resolve("connect.offsets");
                Files.deleteIfExists(offsets);
                Files.writeString(
                        props,
                        String.join(
                                "\n",
                                "bootstrap.servers=" + env.kafka().bootstrapServers(),
                                "listeners=http://127.0.0.1:" + port,
                                "rest.advertised.host.name=127.0.0.1",
                                "plugin.discovery=service_load",
                                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                                "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter",
                                "offset.storage.file.filename=" + offsets.toAbsolutePath(),
                                "offset.flush.interval.ms=1000",
                                ""));
                Path log = logs.resolve("scale-connect-worker.log");
                Process p =
                        ChildJvms.java(
                                "scale-connect-worker",
                                "1g",
                                Map.of(),
                                logs,
                                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                                "org.apache.kafka.connect.cli.ConnectStandalone",
                                props.toAbsolutePath().toString());
                ConnectWorker w = new ConnectWorker(p, "http://127.0.0.1:" + port);
                await(p, w.rest + "/connectors", log, "Connect worker");
                return w;
            } catch (IOException e) {
                throw new IllegalStateException("could not write the worker's settings: " + e, e);
            }
        }

        /** Creates the connector and waits until it and all its tasks run. */
        void create(String name, int tasks, Env.Database db) {
            Map<String, String> c = new LinkedHashMap<>();
            c.put("connector.class", "io.outbox4j.kafka.connect.OutboxSourceConnector");
            c.put("tasks.max", Integer.toString(tasks));
            c.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
            c.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
            c.put("header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter");
            c.put("producer.override.enable.idempotence", "true");
            c.put("producer.override.acks", "all");
            c.put("outbox.jdbc.url", db.url());
            c.put("outbox.jdbc.user", db.user());
            c.put("outbox.jdbc.password", db.password());
            c.put("outbox.table", SUBJECT);
            c.put("poll.interval.ms", "100");
            send("PUT", "/connectors/" + name + "/config", Json.write(c), 201, 200);
            long deadline = System.nanoTime() + ChildJvms.START_TIMEOUT.toNanos();
            while (true) {
                String status = send("GET", "/connectors/" + name + "/status", null, 200, 404);
                if (status.contains("\"FAILED\"")) {
                    throw new IllegalStateException("connector " + name + " failed: " + status);
                }
                int running = status.split("\"RUNNING\"", -1).length - 1;
                if (running == tasks + 1) {
                    return;
                }
                pause(deadline, 100, () -> "connector " + name + " not running: " + status);
            }
        }

        /** Deletes the connector and waits until it is gone (its tasks stopped). */
        void delete(String name) {
            send("DELETE", "/connectors/" + name, null, 204, 404);
            long deadline = System.nanoTime() + ChildJvms.START_TIMEOUT.toNanos();
            while (send("GET", "/connectors", null, 200).contains(Json.write(name))) {
                pause(deadline, 100, () -> "connector " + name + " still listed");
            }
        }

        private String send(String method, String path, String body, int... ok) {
            HttpRequest.Builder b =
                    HttpRequest.newBuilder(URI.create(rest + path))
                            .timeout(Duration.ofSeconds(60))
                            .header("Content-Type", "application/json")
                            .method(
                                    method,
                                    body == null
                                            ? HttpRequest.BodyPublishers.noBody()
                                            : HttpRequest.BodyPublishers.ofString(body));
            try {
                HttpResponse<String> res =
                        HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
                for (int code : ok) {
                    if (res.statusCode() == code) {
                        return res.body();
                    }
                }
                throw new IllegalStateException(
                        method + " " + path + " answered " + res.statusCode() + ": " + res.body());
            } catch (IOException e) {
                throw new IllegalStateException(method + " " + path + " failed: " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }

        @Override
        public void close() {
            ChildJvms.stop(process);
        }
    }
}
