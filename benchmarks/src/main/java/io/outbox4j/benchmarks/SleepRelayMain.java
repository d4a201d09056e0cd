package io.outbox4j.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import org.jdbi.v3.core.Jdbi;

/**
 * One relay process of the {@code scale-io} scenario: a {@link JdbiOutboxStore} over the benchmark
 * PostgreSQL database and an engine {@link Relay} with the engine's defaults except a poll interval
 * of 100 ms, publishing through a {@link SleepPublisher} that waits a fixed time per call and
 * reports every message of the call published. The relay joins the outbox as a member unless {@code
 * --no-membership} is given.
 *
 * <pre>
 * java -cp ... io.outbox4j.benchmarks.SleepRelayMain --table T --owner O --sleep-ms 20 \
 *     --state FILE [--no-membership] [--batch-size N --max-in-flight N --workers N]
 * </pre>
 *
 * The database comes from the environment: {@code BENCH_DB_URL}, {@code BENCH_DB_USER}, {@code
 * BENCH_DB_PASSWORD} (the schema must exist). Once the relay is started the process writes its
 * state file, and again for every line {@code sync <n>} read from standard input, after making each
 * connection of its pool flush its pending table statistics ({@code pg_stat_force_next_flush()},
 * PostgreSQL 15 and later; a backend otherwise reports them up to 10 s late): one line {@code <n>
 * <counter>=<value> ...} with the messages the publisher reported published, its calls, and the
 * relay's observed outcomes. SIGTERM (or the end of standard input: the benchmark is gone) closes
 * the relay, which leaves the outbox, and ends the process.
 */
public final class SleepRelayMain {
    /**
     * JDBC connections with the default workers: the relay's workers plus two, as {@code outbox4j
     * relay} sizes its pool (the tuning series sizes it the same way for its workers).
     */
    static final int POOL_SIZE = Relay.DEFAULT_WORKERS + 2;

    private SleepRelayMain() {}

    /**
     * Runs the relay until SIGTERM or the end of standard input.
     *
     * @param args see the class comment
     * @throws Exception if the relay could not be started
     */
    public static void main(String[] args) throws Exception {
        String table = null;
        String owner = null;
        Path state = null;
        long sleepMs = 20;
        boolean membership = true;
        int[] tuning = {Relay.DEFAULT_BATCH_SIZE, 0, Relay.DEFAULT_WORKERS};
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--table" -> table = args[++i];
                case "--owner" -> owner = args[++i];
                case "--sleep-ms" -> sleepMs = Long.parseLong(args[++i]);
                case "--state" -> state = Path.of(args[++i]);
                case "--no-membership" -> membership = false;
                case "--batch-size" -> tuning[0] = Integer.parseInt(args[++i]);
                case "--max-in-flight" -> tuning[1] = Integer.parseInt(args[++i]);
                case "--workers" -> tuning[2] = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (table == null || owner == null || state == null) {
            throw new IllegalArgumentException("--table, --owner and --state are required");
        }
        run(table, owner, state, sleepMs, membership, tuning);
    }

    /**
     * @param tuning batch size, in-flight bound (0: the engine's default for the batch size) and
     *     workers
     */
    private static void run(
            String table, String owner, Path state, long sleepMs, boolean membership, int[] tuning)
            throws IOException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getenv("BENCH_DB_URL"));
        config.setUsername(System.getenv("BENCH_DB_USER"));
        config.setPassword(System.getenv("BENCH_DB_PASSWORD"));
        config.setMaximumPoolSize(tuning[2] + 2);
        config.setMinimumIdle(tuning[2] + 2);
        config.setPoolName("sleep-relay");
        HikariDataSource pool = new HikariDataSource(config);
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(Jdbi.create(pool))
                        .dialect(JdbiOutboxStore.Dialect.POSTGRESQL)
                        .tableName(table)
                        .build();
        SleepPublisher publisher = new SleepPublisher(Duration.ofMillis(sleepMs));
        Counts counts = new Counts();
        Relay relay =
                (tuning[1] > 0
                                ? Relay.builder(store, publisher).maxInFlight(tuning[1])
                                : Relay.builder(store, publisher))
                        .batchSize(tuning[0])
                        .workers(tuning[2])
                        .owner(owner)
                        .pollInterval(Duration.ofMillis(100))
                        .membership(membership)
                        .observer(counts)
                        .build();
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    relay.close();
                                    pool.close();
                                    System.out.println(
                                            "sleep relay "
                                                    + owner
                                                    + " stopped: "
                                                    + counts.line(publisher));
                                },
                                "sleep-relay-shutdown"));
        relay.start();
        System.out.println(
                "sleep relay "
                        + owner
                        + " started: table "
                        + table
                        + ", publisher sleeps "
                        + sleepMs
                        + " ms per call, membership "
                        + (membership ? "on" : "off"));
        writeState(state, 0, counts.line(publisher));
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.strip().split("\\s+", -1);
            if (w.length == 2 && w[0].equals("sync")) {
                flushStatistics(pool);
                writeState(state, Long.parseLong(w[1]), counts.line(publisher));
            }
        }
        System.out.println("sleep relay " + owner + ": standard input closed, stopping");
        System.exit(0);
    }

    /**
     * Makes the pool's idle connections report their pending statistics now (a busy one reports at
     * the end of its transaction). Borrows only connections idle at that moment: borrowing the
     * whole pool waited up to the pool's 30 s timeout whenever the relay kept one (a listening
     * connection, a long claim), and the relay's threads waited for connections meanwhile.
     */
    private static void flushStatistics(HikariDataSource pool) {
        List<Connection> held = new ArrayList<>();
        try {
            int idle = pool.getHikariPoolMXBean().getIdleConnections();
            for (int i = 0; i < idle; i++) {
                held.add(pool.getConnection());
            }
            for (Connection c : held) {
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT pg_stat_force_next_flush()");
                }
            }
        } catch (SQLException e) {
            System.out.println("statistics not flushed (PostgreSQL before 15?): " + e);
        } finally {
            for (Connection c : held) {
                try {
                    c.close();
                } catch (SQLException e) {
                    // returned to the pool or evicted: nothing to do
                }
            }
        }
    }

    private static void writeState(Path state, long seq, String counts) throws IOException {
        Path tmp = state.resolveSibling(state.getFileName() + ".tmp");
        Files.writeString(tmp, seq + " " + counts + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, state, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Waits a fixed time per call and reports every message of it published: a transport that only
     * waits (an HTTP call, a remote broker's round trip) and costs no CPU.
     *
     * <p>Threads, as the {@link Publisher} contract asks: the call waits on the relay's thread that
     * made it (the relay already runs each call on a thread of its publish pool and enforces the
     * deadline; an adapter adds no thread of its own), never longer than {@code timeout}, and
     * returns at once when interrupted, every message failed.
     */
    static final class SleepPublisher implements Publisher {
        private final long sleepNanos;
        final LongAdder published = new LongAdder();
        final LongAdder calls = new LongAdder();

        SleepPublisher(Duration sleep) {
            this.sleepNanos = sleep.toNanos();
        }

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            long wait = Math.min(sleepNanos, Math.max(0, timeout.toNanos()));
            try {
                TimeUnit.NANOSECONDS.sleep(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Collections.nCopies(messages.size(), PublishOutcome.failed(e));
            }
            if (wait < sleepNanos) {
                return Collections.nCopies(
                        messages.size(),
                        PublishOutcome.failed(
                                new TimeoutException("the call's timeout " + timeout + " passed")));
            }
            calls.increment();
            published.add(messages.size());
            return Collections.nCopies(messages.size(), PublishOutcome.published());
        }
    }

    /** The relay's outcomes and store failures, counted. */
    private static final class Counts implements Observer {
        private final Map<Observation.Outcome, LongAdder> outcomes =
                new EnumMap<>(Observation.Outcome.class);
        private final LongAdder storeErrors = new LongAdder();

        Counts() {
            for (Observation.Outcome o : Observation.Outcome.values()) {
                outcomes.put(o, new LongAdder());
            }
        }

        @Override
        public void onDelivery(Observation observation) {
            outcomes.get(observation.outcome()).increment();
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.increment();
            System.out.println("store error: " + error);
        }

        String line(SleepPublisher publisher) {
            StringBuilder b = new StringBuilder();
            b.append("published=").append(publisher.published.sum());
            b.append(" calls=").append(publisher.calls.sum());
            outcomes.forEach(
                    (o, n) ->
                            b.append(' ')
                                    .append(o.name().toLowerCase(java.util.Locale.ROOT))
                                    .append('=')
                                    .append(n));
            b.append(" store_errors=").append(storeErrors.sum());
            return b.toString();
        }
    }
}
