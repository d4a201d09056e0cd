package io.outbox4j.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;

/**
 * The servers and the connection pool every scenario shares: one fresh PostgreSQL database (from
 * {@link PostgresServer#shared()}), one HikariCP pool used by outbox4j and the hand-written
 * baselines alike, and the Kafka broker ({@link KafkaServer#shared()}), started only when a
 * scenario needs it.
 */
final class Env implements AutoCloseable {
    /** Topic written into every benchmark message. */
    static final String TOPIC = "bench.events";

    /** Module written into every benchmark message. */
    static final String MODULE = "bench";

    /** Events per transaction when a backlog is loaded through a peer's own API. */
    static final int LOAD_CHUNK = 2_000;

    /** Pool size: 8 writer threads, the relay's claim and store-write threads, and some slack. */
    static final int POOL_SIZE = 16;

    final Options options;
    final PrintStream out;
    private PostgresServer postgres;
    private String databaseName;
    private String databaseUrl;
    private HikariDataSource pool;
    private Jdbi jdbi;

    /**
     * Guards the broker's start, apart from the pool: a background start must not hold up the
     * scenarios.
     */
    private final Object kafkaLock = new Object();

    private volatile KafkaServer kafka;
    private Map<String, Object> machine;
    private volatile boolean cpuReadable = true;

    Env(Options options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /**
     * Returns the shared pool, creating the benchmark database on first use.
     *
     * @return the pool
     */
    synchronized DataSource pool() {
        if (pool == null) {
            postgres = PostgresServer.shared();
            databaseName =
                    "outbox4j_bench_"
                            + Long.toHexString(
                                    ThreadLocalRandom.current().nextLong() & 0xffffffffL);
            String url = postgres.createDatabase(databaseName);
            databaseUrl = url;
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            config.setUsername(postgres.user());
            config.setPassword(postgres.password());
            config.setMaximumPoolSize(POOL_SIZE);
            config.setMinimumIdle(POOL_SIZE);
            config.setPoolName("outbox4j-bench");
            pool = new HikariDataSource(config);
            jdbi = Jdbi.create(pool);
            log("PostgreSQL: " + postgres + ", database " + databaseName);
        }
        return pool;
    }

    /**
     * Returns how other processes reach the benchmark database (creating it on first use).
     *
     * @return JDBC URL, user and password
     */
    synchronized Database database() {
        pool();
        return new Database(databaseUrl, postgres.user(), postgres.password());
    }

    /** How to connect to the benchmark database. */
    record Database(String url, String user, String password) {}

    synchronized Jdbi jdbi() {
        pool();
        return jdbi;
    }

    /**
     * Returns the shared Kafka broker, starting it on first use.
     *
     * @return the broker
     */
    KafkaServer kafka() {
        synchronized (kafkaLock) {
            if (kafka == null) {
                long t0 = System.nanoTime();
                KafkaServer k = KafkaServer.shared();
                log("Kafka: " + k + " (ready in " + (System.nanoTime() - t0) / 1_000_000 + " ms)");
                kafka = k;
            }
            return kafka;
        }
    }

    /**
     * Starts the Kafka broker on a background thread, so that its start-up (seconds for an in-JVM
     * broker, much more on a busy machine) overlaps the scenarios that do not need it. Only for
     * quick runs: a full run keeps the broker out of the JVM until the memory scenario is done.
     */
    void startKafkaInBackground() {
        Thread t =
                new Thread(
                        () -> {
                            try {
                                kafka();
                            } catch (RuntimeException e) {
                                log(
                                        "Kafka could not be started in the background (the scenario that needs it will retry): "
                                                + e);
                            }
                        },
                        "bench-kafka-start");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Creates (afresh) an outbox4j table and returns a store over it, on the shared pool.
     *
     * @param table the table name
     * @return the store; its schema exists
     */
    JdbiOutboxStore store(String table) {
        execute("DROP TABLE IF EXISTS " + q(table));
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(jdbi())
                        .dialect(JdbiOutboxStore.Dialect.POSTGRESQL)
                        .tableName(table)
                        .build();
        store.createSchemaIfAbsent();
        return store;
    }

    /**
     * Creates (afresh) the hand-written baseline's table with exactly the shape of an outbox4j
     * table: same columns, defaults, identity, constraints and (partial) indexes.
     *
     * @param table the baseline table
     * @param likeTable an existing outbox4j table
     */
    void handTable(String table, String likeTable) {
        execute("DROP TABLE IF EXISTS " + q(table));
        execute("CREATE TABLE " + q(table) + " (LIKE " + q(likeTable) + " INCLUDING ALL)");
    }

    /**
     * Inserts rows in bulk, server side: ids {@code <prefix><n>}, keys {@code k-<n mod 1000>}, one
     * payload of {@code payloadBytes}, in enqueue order. Pending rows are available since about a
     * day ago; dead rows are older (history accumulates in front of the claim path), dead-lettered
     * after 8 attempts, and keyed {@code dead-k-<n mod 1000>}: a dead letter blocks the later
     * messages of its key, and this history is meant to be in the claim's way, not to block the
     * pending rows.
     *
     * @param table the outbox (or baseline) table
     * @param prefix the id prefix, unique per call on one table
     * @param count how many rows
     * @param payloadBytes the payload size
     * @param dead whether the rows are dead letters
     */
    void load(String table, String prefix, long count, int payloadBytes, boolean dead) {
        load(table, prefix, count, payloadBytes, dead, 1000);
    }

    /**
     * Inserts rows in bulk as {@link #load(String, String, long, int, boolean)} does, over {@code
     * keys} keys ({@code k-<n mod keys>}), or without keys when {@code keys} is 0.
     *
     * @param table the outbox (or baseline) table
     * @param prefix the id prefix, unique per call on one table
     * @param count how many rows
     * @param payloadBytes the payload size
     * @param dead whether the rows are dead letters
     * @param keys how many distinct keys (0: none, every row unkeyed)
     */
    void load(String table, String prefix, long count, int payloadBytes, boolean dead, int keys) {
        Instant base = Instant.now().minusSeconds(dead ? 172_800 : 86_400);
        String sql =
                "INSERT INTO "
                        + q(table)
                        + " (id, topic, msg_key, module, content_type, payload, headers,"
                        + " occurred_at, enqueued_at, available_at, attempts, dead_at, dead_reason)"
                        + " SELECT ? || g, ?, CASE WHEN ? > 0 THEN ? || (g % NULLIF(?, 0)) END, ?,"
                        + " 'application/octet-stream',"
                        + " convert_to(repeat('x', ?), 'UTF8'), '', ts, ts, ts, ?, "
                        + (dead ? "ts, 'bench: gave up'" : "NULL, NULL")
                        + " FROM generate_series(?::bigint, ?::bigint) AS g,"
                        + " LATERAL (SELECT ?::timestamptz + g * interval '1 microsecond' AS ts) AS x";
        long chunk = 250_000;
        try (Connection c = pool().getConnection();
                PreparedStatement st = c.prepareStatement(sql)) {
            for (long from = 1; from <= count; from += chunk) {
                st.setString(1, prefix);
                st.setString(2, TOPIC);
                st.setInt(3, keys);
                st.setString(4, dead ? "dead-k-" : "k-");
                st.setInt(5, keys);
                st.setString(6, MODULE);
                st.setInt(7, payloadBytes);
                st.setInt(8, dead ? 8 : 0);
                st.setLong(9, from);
                st.setLong(10, Math.min(count, from + chunk - 1));
                st.setObject(11, OffsetDateTime.ofInstant(base, ZoneOffset.UTC));
                st.executeUpdate();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "loading " + count + " rows into " + table + " failed: " + e.getMessage(), e);
        }
    }

    /** One event of a backlog loaded through a peer's own API ({@link #loadThrough}). */
    record Loaded(String id, String key, Instant occurredAt, String payload) {}

    /**
     * Loads a backlog through a peer's own API, as {@link #load} writes it for the other sides: ids
     * {@code <prefix><n>}, keys {@code k-<n mod 1000>}, a payload of {@code payloadBytes} 'x',
     * occurred about a day ago in order; {@value #LOAD_CHUNK} events per transaction.
     *
     * @param prefix the id prefix, unique per call
     * @param count how many
     * @param payloadBytes the payload size
     * @param transaction runs a chunk of schedules in one transaction of the peer's
     * @param schedule schedules one event through the peer
     */
    static void loadThrough(
            String prefix,
            int count,
            int payloadBytes,
            Consumer<Runnable> transaction,
            Consumer<Loaded> schedule) {
        String payload = "x".repeat(payloadBytes);
        Instant base = Instant.now().minusSeconds(86_400);
        for (int from = 1; from <= count; from += LOAD_CHUNK) {
            int first = from;
            int last = Math.min(count, from + LOAD_CHUNK - 1);
            transaction.accept(
                    () -> {
                        for (int i = first; i <= last; i++) {
                            schedule.accept(
                                    new Loaded(
                                            prefix + i,
                                            "k-" + (i % 1000),
                                            base.plusNanos(i * 1000L),
                                            payload));
                        }
                    });
        }
    }

    /**
     * Makes a freshly loaded or drained table's state comparable: vacuum, statistics, and a
     * checkpoint so no load's writes are flushed during a measurement.
     *
     * @param tables the tables
     */
    void settle(String... tables) {
        for (String t : tables) {
            execute("VACUUM ANALYZE " + q(t));
        }
        try {
            execute("CHECKPOINT");
        } catch (IllegalStateException e) {
            // not a superuser on an external server: fine, just noisier
        }
    }

    long count(String table) {
        return queryLong("SELECT count(*) FROM " + q(table));
    }

    void execute(String sql) {
        try (Connection c = pool().getConnection();
                Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + " failed: " + e.getMessage(), e);
        }
    }

    long queryLong(String sql) {
        return query(
                sql,
                rs -> {
                    rs.next();
                    return rs.getLong(1);
                });
    }

    String queryText(String sql) {
        return query(
                sql,
                rs -> {
                    StringBuilder b = new StringBuilder();
                    while (rs.next()) {
                        b.append(rs.getString(1)).append('\n');
                    }
                    return b.toString();
                });
    }

    /** Reads what a query returned. */
    private interface Reader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** Runs a query on a pooled connection and reads its result; a failure names the query. */
    private <T> T query(String sql, Reader<T> reader) {
        try (Connection c = pool().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            return reader.read(rs);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Returns the CPU time used so far by the client backends of the benchmark database, read from
     * {@code /proc/<pid>/stat} (user + system, in clock ticks of 10 ms): only when PostgreSQL runs
     * on this machine and its processes are readable.
     *
     * @return nanoseconds, or -1 when unknown
     */
    long databaseCpuNanos() {
        if (!cpuReadable) {
            return -1;
        }
        long nanos = 0;
        try (Connection c = pool().getConnection();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery(
                                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                                        + " AND backend_type = 'client backend'")) {
            while (rs.next()) {
                try {
                    nanos += Cpu.processNanos(rs.getInt(1));
                } catch (IOException e) {
                    cpuReadable = false;
                    return -1;
                }
            }
        } catch (SQLException | RuntimeException e) {
            cpuReadable = false;
            return -1;
        }
        return nanos;
    }

    static String q(String identifier) {
        return '"' + identifier + '"';
    }

    /**
     * Describes the machine: cores, CPU, memory, JVM, OS, PostgreSQL version and durability
     * settings, Kafka.
     *
     * @return a fresh map (the fixed part is read once; Kafka as it is now)
     */
    synchronized Map<String, Object> machine() {
        if (machine == null) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("cores", Runtime.getRuntime().availableProcessors());
            m.put("cpu", cpuModel());
            m.put("memory_gib", memoryGib());
            m.put(
                    "jvm",
                    System.getProperty("java.vm.name")
                            + " "
                            + System.getProperty("java.runtime.version"));
            m.put(
                    "jvm_args",
                    String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
            m.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
            m.put(
                    "os",
                    System.getProperty("os.name")
                            + " "
                            + System.getProperty("os.version")
                            + " "
                            + System.getProperty("os.arch"));
            m.put("postgresql", queryText("SHOW server_version").strip());
            m.put(
                    "postgresql_settings",
                    "fsync="
                            + queryText("SHOW fsync").strip()
                            + " synchronous_commit="
                            + queryText("SHOW synchronous_commit").strip()
                            + " shared_buffers="
                            + queryText("SHOW shared_buffers").strip());
            m.put("postgresql_server", String.valueOf(postgres));
            m.put("commit", gitCommit());
            m.put("load_average_at_start", loadAverage());
            machine = m;
        }
        Map<String, Object> copy = new LinkedHashMap<>(machine);
        KafkaServer k = kafka;
        copy.put("kafka", k == null ? "not started" : k.toString());
        return copy;
    }

    /**
     * The commit measured (with "+changes" when the work tree differs), or "unknown" outside a git
     * checkout.
     */
    private static String gitCommit() {
        try {
            String head = run("git", "rev-parse", "--short=12", "HEAD");
            String dirty = run("git", "status", "--porcelain", "--untracked-files=no");
            return head.isEmpty() ? "unknown" : head + (dirty.isEmpty() ? "" : "+changes");
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String text =
                    new String(
                                    p.getInputStream().readAllBytes(),
                                    java.nio.charset.StandardCharsets.UTF_8)
                            .strip();
            return p.waitFor() == 0 ? text : "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** The 1-minute load average (Linux), a hint of how busy the shared machine was. */
    static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ", -1)[0];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).strip();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    private static long memoryGib() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    return Math.round(
                            Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0 / 1024.0);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    void log(String line) {
        out.println(String.format(Locale.ROOT, "[%tT] %s", System.currentTimeMillis(), line));
        out.flush();
    }

    /** Closes the pool and drops the benchmark database (the servers stop with the JVM). */
    @Override
    public synchronized void close() {
        if (pool != null) {
            pool.close();
            pool = null;
            try (Connection c =
                            DriverManager.getConnection(
                                    postgres.jdbcUrl(), postgres.user(), postgres.password());
                    Statement st = c.createStatement()) {
                st.execute("DROP DATABASE IF EXISTS " + q(databaseName) + " WITH (FORCE)");
            } catch (SQLException e) {
                log("could not drop database " + databaseName + ": " + e.getMessage());
            }
        }
    }
}
