package io.outbox4j.benchmarks;

import io.outbox4j.api.Message;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Write-path cost: business transactions (insert one order) from N threads on the shared pool, in
 * variants measured in the same run: no event, one outbox4j enqueue and one hand-written INSERT
 * into a table of the same shape, through each entry point an application uses (a JDBC {@code
 * Connection}: {@code store.jdbc().enqueue(connection, m)}; a Jdbi {@code Handle}; a Spring
 * transaction: {@link Writers}), plus diagnostics. Each round runs every variant for the same time,
 * in a rotated order, after truncating every table.
 */
final class WriteScenario {
    static final String ORDERS = "bench_order";
    static final String SUBJECT = "write_outbox";
    static final String HAND = "write_hand";
    static final String HAND_CONFLICT = "write_hand_on_conflict";
    private static final long SLICE_MILLIS = 1000;
    private static final java.lang.management.ThreadMXBean CPU =
            java.lang.management.ManagementFactory.getThreadMXBean();
    private static final String INSERT_ORDER =
            "INSERT INTO " + ORDERS + " (customer, amount) VALUES (?, ?)";

    enum Variant {
        NO_EVENT("no event"),
        OUTBOX4J("outbox4j enqueue"),
        /**
         * Not a baseline: the same enqueue by a store built with {@code signalCommits(false)}, so
         * the cost of the cross-process wake-up signal is measured in the same run.
         */
        OUTBOX4J_UNSIGNALLED("outbox4j enqueue, signalCommits(false) (diagnostic)"),
        HAND_WRITTEN("hand-written INSERT"),
        /**
         * Not a baseline: tells how much of a gap is the store's ON CONFLICT clause rather than its
         * Java code.
         */
        HAND_ON_CONFLICT("hand-written INSERT ... ON CONFLICT (id) DO NOTHING (diagnostic)"),
        /** Through a Jdbi {@code Handle}: {@code jdbi.useTransaction}, the order by Jdbi. */
        OUTBOX4J_JDBI("Jdbi: outbox4j enqueue(handle, m)"),
        HAND_JDBI("Jdbi: hand-written INSERT (createUpdate)"),
        /**
         * Spring: {@code TransactionTemplate} over a {@code DataSourceTransactionManager}, the
         * order by {@code JdbcTemplate}; the enqueue takes the path of the starter's {@code
         * TransactionalOutbox} (below).
         */
        OUTBOX4J_SPRING("Spring: outbox4j enqueue as the starter's TransactionalOutbox"),
        HAND_SPRING("Spring: hand-written INSERT (JdbcTemplate)");

        final String label;

        Variant(String label) {
            this.label = label;
        }
    }

    private WriteScenario() {}

    static void createOrders(Env env) {
        env.execute("DROP TABLE IF EXISTS " + ORDERS);
        env.execute(
                "CREATE TABLE "
                        + ORDERS
                        + " (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                        + " customer varchar(64) NOT NULL, amount numeric(12, 2) NOT NULL,"
                        + " created_at timestamptz NOT NULL DEFAULT now())");
        env.execute("CREATE INDEX " + ORDERS + "_customer_idx ON " + ORDERS + " (customer)");
    }

    /**
     * Inserts one order through the caller's connection, as the business part of every transaction.
     *
     * @param c the connection, in a transaction
     * @return the customer, used as the event key
     * @throws SQLException if the insert fails
     */
    static String insertOrder(Connection c) throws SQLException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String customer = "customer-" + random.nextInt(10_000);
        try (PreparedStatement st = c.prepareStatement(INSERT_ORDER)) {
            st.setString(1, customer);
            st.setBigDecimal(2, BigDecimal.valueOf(random.nextInt(1_000_000), 2));
            st.executeUpdate();
        }
        return customer;
    }

    /**
     * A JSON payload of exactly {@code bytes} bytes.
     *
     * @param bytes the size
     * @return the payload
     */
    static byte[] payload(int bytes) {
        StringBuilder b = new StringBuilder("{\"type\":\"order-created\",\"pad\":\"");
        while (b.length() < bytes - 2) {
            b.append('x');
        }
        b.append("\"}");
        byte[] p = b.toString().getBytes(StandardCharsets.UTF_8);
        return p.length == bytes ? p : java.util.Arrays.copyOf(p, bytes);
    }

    static Message message(String id, String key, byte[] payload) {
        return message(id, Env.TOPIC, key, payload);
    }

    static Message message(String id, String topic, String key, byte[] payload) {
        return Message.builder()
                .id(id)
                .topic(topic)
                .key(key)
                .module(Env.MODULE)
                .contentType("application/json")
                .payload(payload)
                .build();
    }

    static Result run(Env env) {
        Options o = env.options;
        int threads = o.size("write-threads");
        int seconds = o.size("write-seconds");
        int warmup = o.size("write-warmup-seconds");
        int rounds = o.size("rounds");
        byte[] payload = payload(o.size("payload"));
        Result r =
                new Result(
                                "write",
                                "Write-path cost: business transaction (insert an order) + 0 or 1 event")
                        .config("threads", threads)
                        .config("seconds_per_variant", seconds)
                        .config("slices", "1 s per variant in turn, order rotated each slice")
                        .config("rounds", rounds)
                        .config("payload_bytes", payload.length)
                        .config("pool", "HikariCP " + Env.POOL_SIZE);
        createOrders(env);
        JdbiOutboxStore store = env.store(SUBJECT);
        JdbiOutboxStore unsignalled =
                JdbiOutboxStore.builder(env.jdbi())
                        .dialect(JdbiOutboxStore.Dialect.POSTGRESQL)
                        .tableName(SUBJECT)
                        .signalCommits(false)
                        .build();
        Writers writers = new Writers(env, store, unsignalled);
        env.handTable(HAND, SUBJECT);
        env.handTable(HAND_CONFLICT, SUBJECT);

        Map<Variant, List<Double>> tps = new EnumMap<>(Variant.class);
        Variant[] all = Variant.values();
        env.log("write: warm-up " + warmup + " s per variant");
        for (Variant v : all) {
            measure(v, writers, payload, threads, warmup * 1000L);
        }
        long[] jvmCpu = new long[all.length];
        long[] writerCpu = new long[all.length];
        long[] dbCpu = new long[all.length];
        long[] transactions = new long[all.length];
        for (int round = 1; round <= rounds; round++) {
            env.execute("TRUNCATE " + tables());
            env.settle(ORDERS, SUBJECT, HAND, HAND_CONFLICT);
            // one-second slices, the variants taking turns (rotated each slice), so a change of the
            // machine's
            // load during the round hits the three variants alike
            long[] count = new long[all.length];
            long[] nanos = new long[all.length];
            long[] cpuThisRound = new long[all.length];
            long[] writerCpuThisRound = new long[all.length];
            long[] dbThisRound = new long[all.length];
            for (int slice = 0; slice < seconds; slice++) {
                for (int i = 0; i < all.length; i++) {
                    int v = (i + slice + round - 1) % all.length;
                    Cpu.Meter meter = Cpu.start(env);
                    long[] m = measure(all[v], writers, payload, threads, SLICE_MILLIS);
                    Cpu used = meter.stop();
                    count[v] += m[0];
                    nanos[v] += m[1];
                    cpuThisRound[v] += used.jvmNanos();
                    writerCpuThisRound[v] += m[2];
                    dbThisRound[v] =
                            dbThisRound[v] < 0 || used.dbNanos() < 0
                                    ? -1
                                    : dbThisRound[v] + used.dbNanos();
                }
            }
            StringBuilder line = new StringBuilder("write round " + round + ":");
            for (int v = 0; v < all.length; v++) {
                double t = Stats.perSecond(count[v], nanos[v]);
                tps.computeIfAbsent(all[v], k -> new ArrayList<>()).add(t);
                jvmCpu[v] += cpuThisRound[v];
                writerCpu[v] += writerCpuThisRound[v];
                dbCpu[v] = dbCpu[v] < 0 || dbThisRound[v] < 0 ? -1 : dbCpu[v] + dbThisRound[v];
                transactions[v] += count[v];
                line.append(String.format(Locale.ROOT, "  %s %,.0f tx/s", all[v].label, t));
            }
            env.log(line.toString());
        }
        double none = Stats.median(tps.get(Variant.NO_EVENT));
        double enqueue = Stats.median(tps.get(Variant.OUTBOX4J));
        double hand = Stats.median(tps.get(Variant.HAND_WRITTEN));
        double handConflict = Stats.median(tps.get(Variant.HAND_ON_CONFLICT));
        r.figure("no_event_tps", "no event (median)", none, "tx/s")
                .figure("outbox4j_tps", "one outbox4j enqueue (median)", enqueue, "tx/s")
                .figure("hand_tps", "one hand-written INSERT (median)", hand, "tx/s")
                .figure("outbox4j_vs_no_event", "outbox4j / no event", enqueue / none, "")
                .figure("hand_vs_no_event", "hand-written / no event", hand / none, "")
                .figure(
                        "hand_on_conflict_tps",
                        "hand-written INSERT ... ON CONFLICT DO NOTHING (diagnostic, median)",
                        handConflict,
                        "tx/s")
                .figure(
                        "hand_on_conflict_vs_hand",
                        "diagnostic: ON CONFLICT / plain hand-written INSERT (median of rounds)",
                        Stats.medianRatio(
                                tps.get(Variant.HAND_ON_CONFLICT), tps.get(Variant.HAND_WRITTEN)),
                        "");
        r.figure(
                "outbox4j_vs_unsignalled",
                "diagnostic: outbox4j / outbox4j with signalCommits(false) (median of rounds)",
                Stats.medianRatio(tps.get(Variant.OUTBOX4J), tps.get(Variant.OUTBOX4J_UNSIGNALLED)),
                "");
        // The entry points' overhead, whoever writes the row: each outbox4j side against the
        // plain JDBC hand-written INSERT (the cheapest write there is)
        r.figure(
                "jdbi_vs_jdbc_hand",
                "diagnostic: Jdbi outbox4j / JDBC hand-written INSERT (median of rounds)",
                Stats.medianRatio(tps.get(Variant.OUTBOX4J_JDBI), tps.get(Variant.HAND_WRITTEN)),
                "");
        r.figure(
                "spring_vs_jdbc_hand",
                "diagnostic: Spring outbox4j / JDBC hand-written INSERT (median of rounds)",
                Stats.medianRatio(tps.get(Variant.OUTBOX4J_SPRING), tps.get(Variant.HAND_WRITTEN)),
                "");
        for (int v = 0; v < all.length; v++) {
            String k = all[v].name().toLowerCase(Locale.ROOT);
            r.figure(
                    k + "_jvm_cpu_us_per_tx",
                    all[v].label + ": JVM CPU per transaction",
                    jvmCpu[v] / 1e3 / Math.max(1, transactions[v]),
                    "µs");
            r.figure(
                    k + "_writer_cpu_us_per_tx",
                    all[v].label + ": of which in the writer threads",
                    writerCpu[v] / 1e3 / Math.max(1, transactions[v]),
                    "µs");
            if (dbCpu[v] >= 0) {
                r.figure(
                        k + "_db_cpu_us_per_tx",
                        all[v].label + ": PostgreSQL backend CPU per transaction",
                        dbCpu[v] / 1e3 / Math.max(1, transactions[v]),
                        "µs");
            }
        }
        r.check(
                "outbox4j / hand-written (median of rounds)",
                Stats.medianRatio(tps.get(Variant.OUTBOX4J), tps.get(Variant.HAND_WRITTEN)),
                ">=",
                0.95);
        r.check(
                "Jdbi Handle: outbox4j / hand-written (median of rounds)",
                Stats.medianRatio(tps.get(Variant.OUTBOX4J_JDBI), tps.get(Variant.HAND_JDBI)),
                ">=",
                0.95);
        r.check(
                "Spring transaction: outbox4j / hand-written (median of rounds)",
                Stats.medianRatio(tps.get(Variant.OUTBOX4J_SPRING), tps.get(Variant.HAND_SPRING)),
                ">=",
                0.95);
        tps.forEach(
                (v, l) ->
                        r.config(
                                v.name().toLowerCase(Locale.ROOT) + "_tps",
                                DrainScenario.rounded(l)));
        r.headline(
                Result.fmt(enqueue) + " tx/s",
                Result.fmt(hand)
                        + " tx/s hand-written INSERT; "
                        + Result.fmt(none)
                        + " tx/s no event");
        env.execute("DROP TABLE " + tables());
        return r;
    }

    /** The scenario's tables, as TRUNCATE and DROP TABLE list them. */
    private static String tables() {
        return String.join(", ", ORDERS, Env.q(SUBJECT), Env.q(HAND), Env.q(HAND_CONFLICT));
    }

    /**
     * Runs one variant on {@code threads} threads for {@code millis}; returns {committed
     * transactions, nanoseconds, CPU nanoseconds of the writer threads}.
     */
    private static long[] measure(
            Variant v, Writers writers, byte[] payload, int threads, long millis) {
        Writers.Transaction transaction = writers.transaction(v, payload);
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            long[] window = new long[2];
            List<Future<long[]>> counts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                counts.add(
                        executor.submit(
                                () -> {
                                    ready.countDown();
                                    go.await();
                                    long end = window[1];
                                    long n = 0;
                                    long cpu0 = CPU.getCurrentThreadCpuTime();
                                    while (System.nanoTime() < end) {
                                        transaction.run();
                                        n++;
                                    }
                                    return new long[] {n, CPU.getCurrentThreadCpuTime() - cpu0};
                                }));
            }
            ready.await();
            window[0] = System.nanoTime();
            window[1] = window[0] + millis * 1_000_000L;
            go.countDown();
            long total = 0;
            long cpu = 0;
            for (Future<long[]> f : counts) {
                long[] done = f.get();
                total += done[0];
                cpu += done[1];
            }
            return new long[] {total, System.nanoTime() - window[0], cpu};
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(
                    "write variant " + v.label + " failed: " + e.getCause(), e.getCause());
        } finally {
            executor.shutdownNow();
        }
    }
}
