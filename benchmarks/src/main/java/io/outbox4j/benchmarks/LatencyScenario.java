package io.outbox4j.benchmarks;

import io.outbox4j.api.Outbox;
import io.outbox4j.engine.Relay;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * Commit-to-publish latency and its CPU cost, at a fixed rate (scheduled, not closed-loop):
 * business transactions that each insert an order and one event are committed at {@code
 * latency-rate} per second, and the event is published to Kafka by
 *
 * <ul>
 *   <li><b>outbox4j</b>: a running relay with the engine's default settings, the application
 *       calling {@code relay.wakeUp()} after each commit;
 *   <li><b>a hand-written poller</b>: a thread that every 10 ms claims what is due (batch 100, the
 *       same claim statement as the other baselines, until a claim comes back short), sends it with
 *       a {@code KafkaProducer} of the same durability settings, flushes, awaits the acks and
 *       deletes it;
 *   <li><b>the peer, gruelbox transaction-outbox 4.2.268</b> ({@link Gruelbox}): the business
 *       transaction inserts the order and schedules one call in the same JDBC transaction (its
 *       {@code TransactionManager.fromDataSource}); after the commit gruelbox submits the call to
 *       its executor (its normal path), which sends the record and waits for its ack;
 *   <li><b>the peer namastack-outbox 1.6.0</b> ({@link Namastack}): the business transaction
 *       inserts the order and calls {@code outbox.schedule(event, key)} in one Spring transaction;
 *       its scheduler (polling every 25 ms, the tuning its docs recommend) hands the record to its
 *       handler, which sends it and waits for its ack; its table is emptied before each window.
 * </ul>
 *
 * Latency is from the commit returning to the broker's acknowledgement being seen by the publisher.
 * A first round warms every side up and is not reported; then each round runs the four sides in
 * turn (which goes first rotates), each with a short warm-up and one measured window; CPU (this
 * JVM: relay, load generator, Kafka client and an in-JVM broker alike; plus the PostgreSQL
 * backends) is metered from the window's first commit to its last acknowledgement. Figures are
 * medians over the windows.
 */
final class LatencyScenario {
    static final String SUBJECT = "latency_outbox";
    static final String HAND = "latency_hand";
    static final String KAFKA_TOPIC = "bench-latency";
    static final String HAND_TOPIC = "bench-latency-hand";

    /** The outbox and topic of the standalone relay's side (a relay in a JVM of its own). */
    static final String STANDALONE = "latency_standalone";

    static final String STANDALONE_TOPIC = "bench-latency-standalone";
    static final String GRUELBOX_TOPIC = "bench-latency-gruelbox";
    static final String NAMASTACK_TOPIC = "bench-latency-namastack";
    private static final int SENDERS = 4;

    /**
     * The sides to run (0 relay, 1 poller, 2 gruelbox, 3 namastack, 4 standalone relay): all, or
     * those named in {@code BENCH_LATENCY_SIDES} (e.g. {@code relay,poller}) for an experiment; a
     * side left out reports nothing, so such a run is not one to publish.
     */
    private static final Set<Integer> SIDES = sides(System.getenv("BENCH_LATENCY_SIDES"));

    private LatencyScenario() {}

    static Set<Integer> sides(String names) {
        List<String> all = List.of("relay", "poller", "gruelbox", "namastack", "standalone");
        if (names == null || names.isBlank()) {
            return Set.of(0, 1, 2, 3, 4);
        }
        Set<Integer> sides = new HashSet<>();
        for (String name : names.split(",", -1)) {
            int side = all.indexOf(name.strip());
            if (side < 0) {
                throw new IllegalArgumentException(
                        "BENCH_LATENCY_SIDES names sides of " + all + ", but was: " + names);
            }
            sides.add(side);
        }
        return sides;
    }

    /** What one side measured over its windows. */
    private static final class Side {
        final String label;
        final List<Double> p50s = new ArrayList<>();
        final List<Double> p99s = new ArrayList<>();
        final List<Double> cpuPerMessage = new ArrayList<>();
        final List<Double> jvmPerMessage = new ArrayList<>();
        final List<Double> dbPerMessage = new ArrayList<>();
        final Timings all = new Timings();
        final Map<String, Long> threadCpu = new java.util.TreeMap<>();
        long meteredMessages;
        long worst;

        Side(String label) {
            this.label = label;
        }

        /** The median of the windows' p50s, in ms. */
        double p50() {
            return Stats.median(p50s);
        }

        /** The median of the windows' p99s, in ms. */
        double p99() {
            return Stats.median(p99s);
        }

        /** The median of the windows' CPU per message, JVM + PostgreSQL, in µs. */
        double cpu() {
            return Stats.median(cpuPerMessage);
        }

        /** {@code p50 … / p99 … ms, … µs CPU/msg}, for the headline. */
        String summary() {
            return "p50 "
                    + Result.fmt(p50())
                    + " / p99 "
                    + Result.fmt(p99())
                    + " ms, "
                    + Result.fmt(cpu())
                    + " µs CPU/msg";
        }
    }

    /** One measured window of a side at the scenario's rate ({@link #drive}). */
    @FunctionalInterface
    private interface Window {
        String[] drive(
                String prefix,
                BusinessTransaction transaction,
                Runnable afterCommit,
                Map<String, Long> ackedAt,
                Side side)
                throws InterruptedException;
    }

    /** Does the work of one business transaction with its event, on the caller's connection. */
    @FunctionalInterface
    private interface Commit {
        void commit(Connection c, String id) throws Exception;
    }

    /**
     * Runs one whole business transaction with its event and calls {@code committed} as soon as its
     * commit returned (before anything else happens on that thread).
     */
    @FunctionalInterface
    private interface BusinessTransaction {
        void run(String id, Runnable committed) throws Exception;
    }

    /**
     * A business transaction on a pooled connection: the work, then the commit.
     *
     * @param pool the pool
     * @param work the work
     * @return the transaction
     */
    private static BusinessTransaction jdbc(DataSource pool, Commit work) {
        return (id, committed) -> {
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                work.commit(c, id);
                c.commit();
                committed.run();
            }
        };
    }

    /**
     * A business transaction that inserts an order and enqueues its event through {@code outbox}.
     */
    private static BusinessTransaction enqueueing(
            DataSource pool, Outbox<Connection> outbox, String topic, byte[] payload) {
        return jdbc(
                pool,
                (c, id) -> {
                    String key = WriteScenario.insertOrder(c);
                    outbox.enqueue(c, WriteScenario.message(id, topic, key, payload));
                });
    }

    static Result run(Env env) {
        Options o = env.options;
        int rate = o.size("latency-rate");
        int seconds = o.size("latency-seconds");
        int warmupSeconds = o.size("latency-warmup-seconds");
        int rounds = o.size("rounds");
        byte[] payload = WriteScenario.payload(o.size("payload"));
        Result r =
                new Result(
                                "latency",
                                "Commit-to-publish latency and CPU at a fixed rate: relay with wakeUp()"
                                        + " after commit vs a hand-written 10 ms poller, gruelbox"
                                        + " transaction-outbox and namastack-outbox, Kafka")
                        .config("rate_per_s", rate)
                        .config("seconds_per_window", seconds)
                        .config("windows_per_side", rounds)
                        .config("warmup_seconds_per_window", warmupSeconds)
                        .config("payload_bytes", payload.length)
                        .config("relay", Drains.relaySettings() + "; wakeUp() after each commit")
                        .config(
                                "poller",
                                "every 10 ms: claim batch "
                                        + TenMsPoller.BATCH
                                        + " until short, send, flush, await acks, delete")
                        .config("gruelbox", Gruelbox.settings())
                        .config(
                                "gruelbox_transaction",
                                "insert the order and schedule(KafkaEvents.class).send(...) in one"
                                        + " transactionManager.inTransaction; submitted after the"
                                        + " commit")
                        .config("namastack", Namastack.settings())
                        .config(
                                "namastack_transaction",
                                "insert the order and outbox.schedule(event, key) in one Spring"
                                        + " transaction (TransactionTemplate); polled by its"
                                        + " scheduler")
                        .config(
                                "standalone",
                                "outbox4j standalone relay (outbox4j relay, the outbox-relay"
                                        + " module) in a JVM of its own with its defaults; the"
                                        + " writer in this JVM enqueues through store.jdbc() and"
                                        + " commits, nothing else: the relay learns of commits by"
                                        + " PostgreSQL LISTEN/NOTIFY; ack time = when a consumer in"
                                        + " this JVM has the record (stricter than the broker's"
                                        + " ack); CPU not reported (the relay's JVM is not metered)")
                        .config("kafka_topic_partitions", 1);
        WriteScenario.createOrders(env);
        JdbiOutboxStore store = env.store(SUBJECT);
        JdbiOutboxStore standaloneStore = env.store(STANDALONE);
        env.handTable(HAND, SUBJECT);
        Gruelbox.dropTables(env);
        Namastack.dropTables(env);
        env.kafka().createTopic(KAFKA_TOPIC, 1, Map.of());
        env.kafka().createTopic(HAND_TOPIC, 1, Map.of());
        env.kafka().createTopic(GRUELBOX_TOPIC, 1, Map.of());
        env.kafka().createTopic(NAMASTACK_TOPIC, 1, Map.of());
        env.kafka().createTopic(STANDALONE_TOPIC, 1, Map.of());
        String textPayload = new String(payload, StandardCharsets.UTF_8);

        Side relaySide = new Side("outbox4j relay");
        Side pollerSide = new Side("10 ms poller");
        Side gruelboxSide = new Side("gruelbox");
        Side namastackSide = new Side("namastack");
        Side standaloneSide = new Side("standalone relay");
        Timings toClaimStart = new Timings();
        Timings claimCall = new Timings();
        Timings toPublishStart = new Timings();
        Timings publishCall = new Timings();
        Timings completes = new Timings();
        long[] claimsAndMessages = new long[2];
        Timings lags = new Timings();
        long[] maxLag = new long[1];
        Window window =
                (name, transaction, afterCommit, ackedAt, side) ->
                        drive(
                                env,
                                rate,
                                warmupSeconds,
                                seconds,
                                name,
                                transaction,
                                afterCommit,
                                ackedAt,
                                side,
                                lags,
                                maxLag);
        try (KafkaPublisher kafka =
                        KafkaPublisher.builder()
                                .bootstrapServers(env.kafka().bootstrapServers())
                                .topicMapper(m -> KAFKA_TOPIC)
                                .build();
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(EndToEndScenario.producerProperties(env));
                KafkaProducer<byte[], byte[]> gruelboxProducer =
                        new KafkaProducer<>(Gruelbox.producerProperties(env));
                Namastack namastack = new Namastack(env, NAMASTACK_TOPIC);
                ConsumedClock standaloneAcks = new ConsumedClock(env, STANDALONE_TOPIC);
                Standalone standalone = new Standalone(env)) {
            Drains.Send send = EndToEndScenario.kafkaSend(producer, HAND_TOPIC);
            DataSource pool = env.pool();
            // Round 0 warms every side up (JIT, connections, producers) and is not reported.
            for (int round = 0; round <= rounds; round++) {
                Side relayTarget = round == 0 ? new Side("outbox4j warm-up") : relaySide;
                Side pollerTarget = round == 0 ? new Side("poller warm-up") : pollerSide;
                Side gruelboxTarget = round == 0 ? new Side("gruelbox warm-up") : gruelboxSide;
                Side namastackTarget = round == 0 ? new Side("namastack warm-up") : namastackSide;
                Side standaloneTarget =
                        round == 0 ? new Side("standalone warm-up") : standaloneSide;
                for (int slot = 0; slot < 5; slot++) {
                    // 0 = relay, 1 = poller, 2 = gruelbox, 3 = namastack, 4 = the standalone
                    // relay; round 1 starts with the relay
                    int which = Math.floorMod(slot + round - 1, 5);
                    if (!SIDES.contains(which)) {
                        continue;
                    }
                    String prefix = "r" + round + "s" + which + "-";
                    if (which == 0) {
                        Instruments.AckClock acks = new Instruments.AckClock(kafka);
                        Instruments.TimedStore timed = new Instruments.TimedStore(store, true);
                        Instruments.Counter counter = new Instruments.Counter();
                        Relay relay =
                                Drains.relayBuilder(timed, acks, "bench-latency", counter).build();
                        relay.start();
                        try {
                            String[] measured =
                                    window.drive(
                                            "lat-" + prefix,
                                            enqueueing(pool, store.jdbc(), Env.TOPIC, payload),
                                            relay::wakeUp,
                                            acks.ackedAt,
                                            relayTarget);
                            for (String id : round == 0 ? new String[0] : measured) {
                                long[] claimed = timed.claimedAt.get(id);
                                Long published = acks.publishStartedAt.get(id);
                                Long acked = acks.ackedAt.get(id);
                                Long committed = committedAt.get(id);
                                if (claimed != null
                                        && published != null
                                        && acked != null
                                        && committed != null) {
                                    toClaimStart.add(Math.max(0, claimed[0] - committed));
                                    claimCall.add(claimed[1] - claimed[0]);
                                    toPublishStart.add(Math.max(0, published - claimed[1]));
                                    publishCall.add(Math.max(0, acked - published));
                                }
                            }
                            if (round > 0) {
                                completes.addAll(timed.completes);
                                claimsAndMessages[0] += timed.claims.size();
                                claimsAndMessages[1] += timed.claimedAt.size();
                            }
                        } finally {
                            relay.close();
                        }
                    } else if (which == 1) {
                        Map<String, Long> ackedAt = new ConcurrentHashMap<>();
                        TenMsPoller poller = new TenMsPoller(env, HAND, send, ackedAt);
                        try {
                            window.drive(
                                    "hand-" + prefix,
                                    jdbc(
                                            pool,
                                            (c, id) -> {
                                                String key = WriteScenario.insertOrder(c);
                                                try (PreparedStatement st =
                                                        c.prepareStatement(
                                                                HandWritten.insertSql(HAND))) {
                                                    HandWritten.bindInsert(st, id, key, payload);
                                                    st.executeUpdate();
                                                }
                                            }),
                                    () -> {},
                                    ackedAt,
                                    pollerTarget);
                        } finally {
                            poller.close();
                        }
                    } else if (which == 4) {
                        window.drive(
                                "alone-" + prefix,
                                enqueueing(pool, standaloneStore.jdbc(), STANDALONE_TOPIC, payload),
                                () -> {},
                                standaloneAcks.consumedAt,
                                standaloneTarget);
                        standalone.checkAlive();
                    } else if (which == 3) {
                        Map<String, Long> ackedAt = new ConcurrentHashMap<>();
                        namastack.ackedAt(ackedAt);
                        env.execute("TRUNCATE " + Namastack.TABLE);
                        namastack.startProcessing();
                        try {
                            window.drive(
                                    "namastack-" + prefix,
                                    (id, committed) ->
                                            namastack.inTransaction(
                                                    WriteScenario::insertOrder,
                                                    new Namastack.Event(
                                                            id,
                                                            Env.TOPIC,
                                                            Env.MODULE,
                                                            "application/json",
                                                            Instant.now().toString(),
                                                            textPayload),
                                                    committed),
                                    () -> {},
                                    ackedAt,
                                    namastackTarget);
                        } finally {
                            namastack.stopProcessing();
                        }
                        if (namastack.problems() != null || Namastack.incomplete(env) != 0) {
                            throw new IllegalStateException(
                                    "namastack did not complete every record cleanly: "
                                            + Namastack.incomplete(env)
                                            + " incomplete; "
                                            + namastack.problems());
                        }
                    } else {
                        Map<String, Long> ackedAt = new ConcurrentHashMap<>();
                        Gruelbox.KafkaSender sender =
                                new Gruelbox.KafkaSender(gruelboxProducer, GRUELBOX_TOPIC, ackedAt);
                        Gruelbox gruelbox = new Gruelbox(pool, sender, Duration.ofSeconds(1));
                        try {
                            gruelbox.start();
                            window.drive(
                                    "gruelbox-" + prefix,
                                    (id, committed) ->
                                            gruelbox.transactionManager()
                                                    .inTransactionThrows(
                                                            tx -> {
                                                                // runs first after the commit,
                                                                // before gruelbox's own hook
                                                                // submits the call
                                                                tx.addPostCommitHook(committed);
                                                                String key =
                                                                        WriteScenario.insertOrder(
                                                                                tx.connection());
                                                                gruelbox.outbox()
                                                                        .schedule(
                                                                                Gruelbox.KafkaEvents
                                                                                        .class)
                                                                        .send(
                                                                                id,
                                                                                Env.TOPIC,
                                                                                key,
                                                                                Env.MODULE,
                                                                                "application/json",
                                                                                Instant.now(),
                                                                                textPayload);
                                                            }),
                                    () -> {},
                                    ackedAt,
                                    gruelboxTarget);
                        } finally {
                            gruelbox.close();
                        }
                        if (gruelbox.problems() != null) {
                            throw new IllegalStateException(
                                    "gruelbox did not run every call cleanly: "
                                            + gruelbox.problems());
                        }
                        if (env.count(Gruelbox.TABLE) != 0) {
                            throw new IllegalStateException(
                                    "gruelbox left "
                                            + env.count(Gruelbox.TABLE)
                                            + " calls in "
                                            + Gruelbox.TABLE);
                        }
                    }
                    committedAt.clear();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        r.figure(
                "pacer_p99_lag_ms",
                "pacer: start delay p99 (the machine's own stalls)",
                lags.percentileMs(99),
                "ms");
        r.figure("pacer_max_lag_ms", "pacer: worst start delay", Stats.ms(maxLag[0]), "ms");
        r.figure(
                        "wait_claim_p50_ms",
                        "outbox4j: commit -> claim start p50",
                        toClaimStart.percentileMs(50),
                        "ms")
                .figure(
                        "wait_claim_p99_ms",
                        "outbox4j: commit -> claim start p99",
                        toClaimStart.percentileMs(99),
                        "ms")
                .figure(
                        "claim_p50_ms",
                        "outbox4j: claim statement p50",
                        claimCall.percentileMs(50),
                        "ms")
                .figure(
                        "claim_p99_ms",
                        "outbox4j: claim statement p99",
                        claimCall.percentileMs(99),
                        "ms")
                .figure(
                        "claimed_to_publish_p99_ms",
                        "outbox4j: claim returned -> publish call p99",
                        toPublishStart.percentileMs(99),
                        "ms")
                .figure(
                        "publish_p50_ms",
                        "outbox4j: publish call -> broker ack p50",
                        publishCall.percentileMs(50),
                        "ms")
                .figure(
                        "publish_p99_ms",
                        "outbox4j: publish call -> broker ack p99",
                        publishCall.percentileMs(99),
                        "ms")
                .figure(
                        "complete_p50_ms",
                        "outbox4j: complete() p50",
                        completes.percentileMs(50),
                        "ms")
                .figure(
                        "complete_p99_ms",
                        "outbox4j: complete() p99",
                        completes.percentileMs(99),
                        "ms")
                .figure(
                        "batch_mean",
                        "outbox4j: messages per claim (mean, empty claims included)",
                        claimsAndMessages[1] / (double) Math.max(1, claimsAndMessages[0]),
                        "");
        if (SIDES.size() < 5) {
            // an experiment: the windows' lines above have the p50, p99 and CPU of the sides that
            // ran
            r.config("sides", System.getenv("BENCH_LATENCY_SIDES"));
            return r;
        }
        double p99 = relaySide.p99();
        double cpu = relaySide.cpu();
        r.figure("messages", "measured messages per side", (double) rate * seconds * rounds, "")
                .figure(
                        "p50_ms",
                        "outbox4j: p50 commit -> broker ack (median of windows)",
                        relaySide.p50(),
                        "ms")
                .figure(
                        "p90_ms",
                        "outbox4j: p90 (all windows)",
                        relaySide.all.percentileMs(90),
                        "ms")
                .figure(
                        "p99_ms",
                        "outbox4j: p99 commit -> broker ack (median of windows)",
                        p99,
                        "ms")
                .figure("max_ms", "outbox4j: max (all windows)", Stats.ms(relaySide.worst), "ms");
        latencyFigures(r, "hand_", "10 ms poller", pollerSide);
        cpuFigures(r, "", "outbox4j", relaySide);
        cpuFigures(r, "hand_", "10 ms poller", pollerSide);
        r.check("outbox4j p99 latency (ms)", p99, "<=", 10)
                .check(
                        "outbox4j p99 / 10 ms poller p99",
                        p99 / Math.max(1e-9, pollerSide.p99()),
                        "<=",
                        1.0)
                .check(
                        "outbox4j CPU per message / 10 ms poller's",
                        cpu / Math.max(1e-9, pollerSide.cpu()),
                        "<=",
                        1.5)
                .check(
                        "outbox4j p99 / gruelbox p99",
                        p99 / Math.max(1e-9, gruelboxSide.p99()),
                        "<=",
                        1.0)
                .check(
                        "outbox4j p99 / namastack p99",
                        p99 / Math.max(1e-9, namastackSide.p99()),
                        "<=",
                        1.0);
        double standaloneP99 = standaloneSide.p99();
        r.figure(
                        "standalone_p50_ms",
                        "standalone relay (own JVM): p50 commit -> consumed (median of windows)",
                        standaloneSide.p50(),
                        "ms")
                .figure(
                        "standalone_p99_ms",
                        "standalone relay (own JVM): p99 commit -> consumed (median of windows)",
                        standaloneP99,
                        "ms")
                .figure(
                        "standalone_max_ms",
                        "standalone relay (own JVM): max (all windows)",
                        Stats.ms(standaloneSide.worst),
                        "ms")
                .check("standalone relay p99 (ms), writer in another JVM", standaloneP99, "<=", 20)
                .config("standalone_p99_per_window_ms", standaloneSide.p99s)
                .config("standalone_p50_per_window_ms", standaloneSide.p50s);
        String latency = "latency at " + rate + " commits/s: commit → broker ack p50 / p99, ms";
        String cpuRow = "latency at " + rate + " commits/s: CPU per message, JVM + PostgreSQL, µs";
        Map<String, Side> columns = new java.util.LinkedHashMap<>();
        columns.put(Report.WEAK, pollerSide);
        columns.put(Report.GRUELBOX, gruelboxSide);
        columns.put(Report.NAMASTACK, namastackSide);
        columns.put(Report.OUTBOX4J, relaySide);
        columns.forEach(
                (column, s) ->
                        r.peer(
                                        latency,
                                        column,
                                        Result.fmt(s.p50())
                                                + " / "
                                                + Result.fmt(s.p99())
                                                + (s == pollerSide ? " (10 ms poller)" : ""))
                                .peer(cpuRow, column, Result.fmt(s.cpu())));
        latencyFigures(r, "gruelbox_", "gruelbox", gruelboxSide);
        cpuFigures(r, "gruelbox_", "gruelbox", gruelboxSide);
        latencyFigures(r, "namastack_", "namastack-outbox", namastackSide);
        cpuFigures(r, "namastack_", "namastack-outbox", namastackSide);
        for (Side s : List.of(relaySide, pollerSide, gruelboxSide, namastackSide)) {
            String key =
                    s == relaySide
                            ? "relay"
                            : s == pollerSide
                                    ? "hand"
                                    : s == gruelboxSide ? "gruelbox" : "namastack";
            s.threadCpu.forEach(
                    (group, nanos) ->
                            r.figure(
                                    key + "_cpu_" + Cpu.key(group) + "_us_per_msg",
                                    s.label + ": JVM CPU per message in " + group,
                                    nanos / 1e3 / Math.max(1, s.meteredMessages),
                                    "µs"));
        }
        r.config("p99_per_window_ms", relaySide.p99s)
                .config("p50_per_window_ms", relaySide.p50s)
                .config("hand_p99_per_window_ms", pollerSide.p99s)
                .config("hand_p50_per_window_ms", pollerSide.p50s)
                .config("cpu_us_per_msg_per_window", relaySide.cpuPerMessage)
                .config("hand_cpu_us_per_msg_per_window", pollerSide.cpuPerMessage)
                .config("gruelbox_p99_per_window_ms", gruelboxSide.p99s)
                .config("gruelbox_p50_per_window_ms", gruelboxSide.p50s)
                .config("gruelbox_cpu_us_per_msg_per_window", gruelboxSide.cpuPerMessage)
                .config("namastack_p99_per_window_ms", namastackSide.p99s)
                .config("namastack_p50_per_window_ms", namastackSide.p50s)
                .config("namastack_cpu_us_per_msg_per_window", namastackSide.cpuPerMessage);
        r.headline(
                relaySide.summary() + " at " + rate + " msg/s",
                "10 ms poller: "
                        + pollerSide.summary()
                        + "; gruelbox: "
                        + gruelboxSide.summary()
                        + "; namastack: "
                        + namastackSide.summary());
        env.execute(
                "DROP TABLE "
                        + WriteScenario.ORDERS
                        + ", "
                        + Env.q(SUBJECT)
                        + ", "
                        + Env.q(HAND)
                        + ", "
                        + Env.q(STANDALONE));
        Gruelbox.dropTables(env);
        Namastack.dropTables(env);
        return r;
    }

    /** The standalone relay's process over {@link #STANDALONE}, ready, for the whole scenario. */
    private static final class Standalone implements AutoCloseable {
        private final StandaloneRelay relay;

        Standalone(Env env) {
            Path logs = Path.of("target", "latency-logs");
            try {
                Files.createDirectories(logs);
            } catch (java.io.IOException e) {
                throw new IllegalStateException("cannot create " + logs + ": " + e, e);
            }
            relay = StandaloneRelay.start(env, "latency-standalone-relay", STANDALONE, null, logs);
            try {
                relay.awaitReady();
            } catch (RuntimeException e) {
                relay.stop();
                throw e;
            }
        }

        /** Fails the scenario if the relay's process ended. */
        void checkAlive() {
            if (!relay.process().isAlive()) {
                throw new IllegalStateException(
                        "the standalone relay's process ended: " + ChildJvms.tail(relay.log()));
            }
        }

        @Override
        public void close() {
            relay.stop();
        }
    }

    /** A side's latency figures: p50, p99 (medians of windows) and max, keys {@code <prefix>…}. */
    private static void latencyFigures(Result r, String prefix, String label, Side s) {
        r.figure(prefix + "p50_ms", label + ": p50 (median of windows)", s.p50(), "ms")
                .figure(prefix + "p99_ms", label + ": p99 (median of windows)", s.p99(), "ms")
                .figure(prefix + "max_ms", label + ": max (all windows)", Stats.ms(s.worst), "ms");
    }

    /** A side's CPU per message (median of windows) and its split, keys {@code <prefix>…}. */
    private static void cpuFigures(Result r, String prefix, String label, Side s) {
        r.figure(
                        prefix + "cpu_us_per_msg",
                        label + ": CPU per message, JVM + PostgreSQL (median of windows)",
                        s.cpu(),
                        "µs")
                .figure(
                        prefix + "jvm_cpu_us_per_msg",
                        label + ": of which JVM",
                        Stats.median(s.jvmPerMessage),
                        "µs")
                .figure(
                        prefix + "db_cpu_us_per_msg",
                        label + ": of which PostgreSQL backends",
                        Stats.median(s.dbPerMessage),
                        "µs");
    }

    /** Commit time (nanoTime) per event id of the side being driven. */
    private static final Map<String, Long> committedAt = new ConcurrentHashMap<>();

    /**
     * Commits {@code warm-up + window} transactions at {@code rate}, waits until each event is
     * acknowledged, and adds the window's latencies and CPU to {@code side}.
     *
     * @return the ids of the measured window
     */
    private static String[] drive(
            Env env,
            int rate,
            int warmupSeconds,
            int seconds,
            String prefix,
            BusinessTransaction transaction,
            Runnable afterCommit,
            Map<String, Long> ackedAt,
            Side side,
            Timings lags,
            long[] maxLag)
            throws InterruptedException {
        int warm = rate * warmupSeconds;
        int window = rate * seconds;
        int total = warm + window;
        String[] ids = new String[total];
        for (int i = 0; i < total; i++) {
            ids[i] = prefix + i;
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
        Cpu.Meter cpu = null;
        Cpu used = null;
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(total);
        try {
            long period = 1_000_000_000L / rate;
            long start = System.nanoTime() + 50_000_000L;
            for (int i = 0; i < total && failure.get() == null; i++) {
                long due = start + i * period;
                long wait;
                while ((wait = due - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                if (i == warm) {
                    cpu = Cpu.start(env);
                }
                long lag = System.nanoTime() - due;
                maxLag[0] = Math.max(maxLag[0], lag);
                lags.add(lag);
                String id = ids[i];
                senders.execute(
                        () -> {
                            try {
                                transaction.run(
                                        id,
                                        () -> {
                                            committedAt.put(id, System.nanoTime());
                                            afterCommit.run();
                                        });
                            } catch (Exception | Error e) {
                                failure.compareAndSet(null, e);
                            } finally {
                                done.countDown();
                            }
                        });
            }
            // The committing threads stay alive until the meter stops, so their CPU is counted as
            // theirs (a finished thread's CPU would only show in the JVM total).
            if (!done.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("senders did not finish");
            }
            if (failure.get() != null) {
                throw new IllegalStateException(
                        "a committed enqueue failed: " + failure.get(), failure.get());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            for (int i = total - 1; i >= 0; i--) {
                while (!ackedAt.containsKey(ids[i])) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(
                                side.label + ": message " + ids[i] + " was never acknowledged");
                    }
                    TimeUnit.MILLISECONDS.sleep(20);
                }
            }
            used = cpu == null ? null : cpu.stop();
        } finally {
            senders.shutdownNow();
        }
        Timings w = new Timings();
        String[] measured = new String[window];
        for (int i = warm; i < total; i++) {
            String id = ids[i];
            measured[i - warm] = id;
            Long acked = ackedAt.get(id);
            Long committed = committedAt.get(id);
            if (acked == null || committed == null) {
                throw new IllegalStateException(
                        side.label
                                + ": message "
                                + id
                                + " has no "
                                + (acked == null ? "ack" : "commit"));
            }
            long latency = Math.max(0, acked - committed);
            w.add(latency);
            side.all.add(latency);
            side.worst = Math.max(side.worst, latency);
        }
        side.p50s.add(w.percentileMs(50));
        side.p99s.add(w.percentileMs(99));
        if (used != null) {
            double jvm = used.jvmNanos() / 1e3 / window;
            double db = used.dbNanos() < 0 ? 0 : used.dbNanos() / 1e3 / window;
            side.jvmPerMessage.add(jvm);
            side.dbPerMessage.add(db);
            side.cpuPerMessage.add(jvm + db);
            used.threads().forEach((group, nanos) -> side.threadCpu.merge(group, nanos, Long::sum));
            side.meteredMessages += window;
        }
        env.log(
                String.format(
                        Locale.ROOT,
                        "latency %-15s window: p50 %.1f ms, p99 %.1f ms, max %.1f ms, CPU %.0f µs/msg",
                        side.label,
                        w.percentileMs(50),
                        w.percentileMs(99),
                        w.percentileMs(100),
                        side.cpuPerMessage.isEmpty()
                                ? 0.0
                                : side.cpuPerMessage.get(side.cpuPerMessage.size() - 1)));
        return measured;
    }
}
