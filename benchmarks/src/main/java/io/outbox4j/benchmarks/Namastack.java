package io.outbox4j.benchmarks;

import io.namastack.outbox.Outbox;
import io.namastack.outbox.OutboxProcessingScheduler;
import io.namastack.outbox.handler.OutboxHandler;
import io.namastack.outbox.handler.OutboxRecordMetadata;
import io.namastack.outbox.partition.PartitionHasher;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The peer namastack-outbox 1.6.0 ({@code io.namastack:namastack-outbox-starter-jdbc}, Spring Boot
 * 4.0.6), measured beside outbox4j in {@code e2e} and {@code latency} (issue 27, item 1), used as
 * its docs describe for a Spring Boot application:
 *
 * <ul>
 *   <li>a Spring Boot application context in this JVM (no web server) with its auto-configuration
 *       on the benchmark's HikariCP pool (a {@code DataSource} bean delegating to it; Boot's {@code
 *       DataSourceTransactionManager} and {@code JdbcClient} over it), its own schema ({@code
 *       outbox_record}, {@code outbox_instance}, {@code outbox_partition}, created by its schema
 *       initialisation) and its Jackson 3 payload serializer;
 *   <li>business code calls {@code outbox.schedule(event, key)} inside its Spring transaction; its
 *       scheduler polls the partitions assigned to this instance (all 256 with one instance), loads
 *       up to {@code batch-size} record keys per cycle, runs one task per key on its processing
 *       executor, which hands each record of the key in order to the handler and marks it
 *       completed;
 *   <li>the handler (its Kafka module is not on Maven Central) sends one Kafka record with the
 *       other sides' key, payload and five outbox headers and waits for its acknowledgement,
 *       through {@link Gruelbox.KafkaSender} (the producer of the gruelbox peer's settings:
 *       acks=all, idempotence, {@code linger.ms=0});
 *   <li>its defaults, plus the throughput tuning of its documentation's "Performance Tuning" page
 *       ("Platform-Thread Candidate": Java 17 has no virtual threads) in {@link #SETTINGS}.
 * </ul>
 */
final class Namastack implements AutoCloseable {
    /** Its records table. */
    static final String TABLE = "outbox_record";

    /** The version measured. */
    static final String VERSION = "1.6.0";

    /**
     * The settings beyond its defaults: the "Platform-Thread Candidate" of its Performance Tuning
     * page (batch-size 1000 keys, fixed polling every 25 ms, executor 16 to 32 threads, heartbeat 1
     * s, stale-instance timeout 10 s, rebalance 1 s); {@code delete-completed-records} and {@code
     * stop-on-first-failure} keep their defaults (false, true), as that page recommends.
     */
    static final Map<String, Object> SETTINGS = new LinkedHashMap<>();

    static {
        SETTINGS.put("namastack.outbox.polling.trigger", "fixed");
        SETTINGS.put("namastack.outbox.polling.batch-size", "1000");
        SETTINGS.put("namastack.outbox.polling.fixed.interval", "25ms");
        SETTINGS.put("namastack.outbox.processing.executor-core-pool-size", "16");
        SETTINGS.put("namastack.outbox.processing.executor-max-pool-size", "32");
        SETTINGS.put("namastack.outbox.instance.heartbeat-interval", "1s");
        SETTINGS.put("namastack.outbox.instance.stale-instance-timeout", "10s");
        SETTINGS.put("namastack.outbox.instance.rebalance-interval", "1s");
    }

    /** The event namastack stores (as JSON, by its serializer) and hands back to the handler. */
    public record Event(
            String id,
            String topic,
            String module,
            String contentType,
            String occurredAt,
            String payload) {}

    /** The Spring Boot application: auto-configuration only, the beans come from the benchmark. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {}

    /**
     * Sends each record through the current {@link Gruelbox.KafkaSender} (awaiting the ack) and
     * counts successes, letting a scenario wait for a number of them.
     */
    static final class KafkaHandler implements OutboxHandler {
        private volatile Gruelbox.KafkaSender sender;
        private final LongAdder handled = new LongAdder();
        private final AtomicReference<String> firstProblem = new AtomicReference<>();
        private volatile long target = Long.MAX_VALUE;
        private volatile CountDownLatch reached = new CountDownLatch(1);
        private final AtomicLong reachedAt = new AtomicLong();

        KafkaHandler(Gruelbox.KafkaSender sender) {
            this.sender = sender;
        }

        @Override
        public boolean supports(Object payload, OutboxRecordMetadata metadata) {
            return payload instanceof Event;
        }

        @Override
        public void handle(Object payload, OutboxRecordMetadata metadata) {
            Event e = (Event) payload;
            try {
                sender.send(
                        e.id(),
                        e.topic(),
                        metadata.getKey(),
                        e.module(),
                        e.contentType(),
                        Instant.parse(e.occurredAt()),
                        e.payload());
            } catch (RuntimeException ex) {
                firstProblem.compareAndSet(null, ex.toString());
                throw ex;
            }
            handled.increment();
            if (handled.sum() >= target && reachedAt.compareAndSet(0, System.nanoTime())) {
                reached.countDown();
            }
        }

        /** Counts afresh and waits for {@code messages} successes from now on. */
        void expect(long messages) {
            reachedAt.set(0);
            reached = new CountDownLatch(1);
            handled.reset();
            target = messages;
        }

        void sender(Gruelbox.KafkaSender sender) {
            this.sender = sender;
        }
    }

    private final ConfigurableApplicationContext context;
    private final DataSource dataSource;
    private final Outbox outbox;
    private final TransactionTemplate transactions;
    private final OutboxProcessingScheduler scheduler;
    private final KafkaProducer<byte[], byte[]> producer;
    private final String kafkaTopic;
    final KafkaHandler handler;

    /**
     * Starts namastack's application context over the benchmark's pool (creating its tables if
     * absent) with a producer of its own ({@link Gruelbox#producerProperties}) that its handler
     * sends to {@code kafkaTopic} with; its scheduler is stopped until {@link #startProcessing()}.
     *
     * @param env the environment
     * @param kafkaTopic the Kafka topic
     */
    Namastack(Env env, String kafkaTopic) {
        this(env.pool(), Gruelbox.producerProperties(env), kafkaTopic);
    }

    /**
     * As {@link #Namastack(Env, String)}, on any pool and producer settings (a namastack instance
     * in a JVM of its own, {@link NamastackMain}).
     *
     * @param pool the pool
     * @param producerProperties the producer's settings
     * @param kafkaTopic the Kafka topic
     */
    Namastack(DataSource pool, Map<String, Object> producerProperties, String kafkaTopic) {
        this.kafkaTopic = kafkaTopic;
        this.producer = new KafkaProducer<>(producerProperties);
        this.handler = new KafkaHandler(new Gruelbox.KafkaSender(producer, kafkaTopic, null));
        // Boot must not reconfigure the benchmark's logging (slf4j-simple)
        System.setProperty("org.springframework.boot.logging.LoggingSystem", "none");
        Map<String, Object> properties = new LinkedHashMap<>(SETTINGS);
        properties.put("spring.jmx.enabled", "false");
        this.context =
                new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE)
                        .bannerMode(Banner.Mode.OFF)
                        .logStartupInfo(false)
                        .registerShutdownHook(false)
                        .properties(properties)
                        .initializers(
                                ctx -> {
                                    GenericApplicationContext g = (GenericApplicationContext) ctx;
                                    // a delegate: the pool is not the context's to close
                                    g.registerBean(
                                            "dataSource",
                                            DataSource.class,
                                            () -> new DelegatingDataSource(pool));
                                    g.registerBean(
                                            "benchmarkKafkaHandler",
                                            KafkaHandler.class,
                                            () -> handler);
                                })
                        .run();
        this.dataSource = context.getBean(DataSource.class);
        this.outbox = context.getBean(Outbox.class);
        this.transactions =
                new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        this.scheduler = context.getBean(OutboxProcessingScheduler.class);
        scheduler.stop();
    }

    /**
     * Describes the configuration, for a result.
     *
     * @return one line
     */
    static String settings() {
        return "namastack-outbox "
                + VERSION
                + " (namastack-outbox-starter-jdbc, Spring Boot 4.0.6 context in this JVM on the"
                + " same HikariCP pool): its schema and defaults plus the Performance Tuning page's"
                + " platform-thread candidate "
                + SETTINGS
                + "; handler: producer.send(record).get() with acks=all, idempotence, linger.ms=0";
    }

    /** Drops its tables, so that its schema initialisation creates them afresh. */
    static void dropTables(Env env) {
        env.execute("DROP TABLE IF EXISTS outbox_record, outbox_instance, outbox_partition");
    }

    /**
     * Creates its tables from its own PostgreSQL schema script (as its schema initialisation does),
     * so that instances started together do not race to create them.
     *
     * @param env the environment
     */
    static void createTables(Env env) {
        String script = "schema/postgres/outbox-tables.sql";
        try (java.io.InputStream in =
                Namastack.class.getClassLoader().getResourceAsStream(script)) {
            if (in == null) {
                throw new IllegalStateException(script + " is not on the class path");
            }
            for (String statement :
                    new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                            .split(";", -1)) {
                if (!statement.isBlank()) {
                    env.execute(statement);
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Commits {@code count} records in one statement, as its {@code schedule(event, key)} writes
     * them for {@link KafkaHandler}: status {@code NEW}, the event as JSON, its record type, the
     * partition its hash gives the key, the handler's id; ids {@code <prefix><n>}, keys {@code k-<n
     * mod keys>}, created (and due) about a day ago in order, as {@link Env#load} writes the other
     * sides' rows.
     *
     * @param env the environment
     * @param prefix the id prefix
     * @param count how many
     * @param payloadBytes the payload size
     * @param keys how many keys
     */
    static void loadAtOnce(Env env, String prefix, int count, int payloadBytes, int keys) {
        Integer[] n = new Integer[keys];
        String[] key = new String[keys];
        Integer[] partition = new Integer[keys];
        for (int i = 0; i < keys; i++) {
            n[i] = i;
            key[i] = "k-" + i;
            partition[i] = PartitionHasher.INSTANCE.getPartitionForRecordKey(key[i]);
        }
        String handlerId =
                KafkaHandler.class.getName()
                        + "#handle("
                        + Object.class.getName()
                        + ","
                        + OutboxRecordMetadata.class.getName()
                        + ")";
        String sql =
                "INSERT INTO "
                        + TABLE
                        + " (id, status, record_key, record_type, payload, context, created_at,"
                        + " completed_at, failure_count, failure_reason, next_retry_at,"
                        + " partition_no, handler_id)"
                        + " SELECT ? || g, 'NEW', k.record_key, ?, json_build_object('id', ? || g,"
                        + " 'topic', ?, 'module', ?, 'contentType', 'application/octet-stream',"
                        + " 'occurredAt', to_char(ts AT TIME ZONE 'UTC',"
                        + " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'payload', repeat('x', ?))::text,"
                        + " NULL, ts, NULL, 0, NULL, ts, k.partition_no, ?"
                        + " FROM generate_series(1, ?) AS g"
                        + " JOIN unnest(?::int[], ?::varchar[], ?::int[]) AS k(n, record_key,"
                        + " partition_no) ON k.n = g % ?,"
                        + " LATERAL (SELECT ?::timestamptz + g * interval '1 microsecond' AS ts)"
                        + " AS x";
        try (Connection c = env.pool().getConnection();
                java.sql.PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, prefix);
            st.setString(2, Event.class.getName());
            st.setString(3, prefix);
            st.setString(4, Env.TOPIC);
            st.setString(5, Env.MODULE);
            st.setInt(6, payloadBytes);
            st.setString(7, handlerId);
            st.setInt(8, count);
            st.setArray(9, c.createArrayOf("integer", n));
            st.setArray(10, c.createArrayOf("varchar", key));
            st.setArray(11, c.createArrayOf("integer", partition));
            st.setInt(12, keys);
            st.setObject(
                    13,
                    java.time.OffsetDateTime.now(java.time.ZoneOffset.UTC).minusSeconds(86_400));
            st.executeUpdate();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(
                    "loading " + count + " namastack records failed: " + e.getMessage(), e);
        }
    }

    /**
     * Records that it did not complete: {@code NEW} or {@code FAILED} (completed records stay in
     * the table, its default).
     *
     * @param env the environment
     * @return the count
     */
    static long incomplete(Env env) {
        return env.queryLong("SELECT count(*) FROM " + TABLE + " WHERE status <> 'COMPLETED'");
    }

    /**
     * Notes from now on when each event's acknowledgement was seen.
     *
     * @param ackedAt event id → nanoTime of its ack
     */
    void ackedAt(Map<String, Long> ackedAt) {
        handler.sender(new Gruelbox.KafkaSender(producer, kafkaTopic, ackedAt));
    }

    void startProcessing() {
        scheduler.start();
    }

    void stopProcessing() {
        scheduler.stop();
    }

    /**
     * Runs one business transaction: {@code work} on the transaction's connection, then {@code
     * outbox.schedule(event, key)} in the same Spring transaction; {@code committed} runs right
     * after the commit.
     *
     * @param work the business statements; returns the record key
     * @param event the event
     * @param committed runs after the commit, or null
     */
    void inTransaction(BusinessWork work, Event event, Runnable committed) {
        transactions.executeWithoutResult(
                status -> {
                    if (committed != null) {
                        TransactionSynchronizationManager.registerSynchronization(
                                new TransactionSynchronization() {
                                    @Override
                                    public void afterCommit() {
                                        committed.run();
                                    }
                                });
                    }
                    Connection c = DataSourceUtils.getConnection(dataSource);
                    String key;
                    try {
                        key = work.run(c);
                    } catch (Exception e) {
                        throw new IllegalStateException("business work failed: " + e, e);
                    } finally {
                        DataSourceUtils.releaseConnection(c, dataSource);
                    }
                    outbox.schedule(event, key);
                });
    }

    /** Business statements on the transaction's connection. */
    @FunctionalInterface
    interface BusinessWork {
        String run(Connection c) throws Exception;
    }

    /**
     * Loads a backlog through namastack itself: {@code count} events scheduled in transactions
     * ({@link Env#loadThrough}) while its scheduler is stopped.
     *
     * @param prefix the event id prefix
     * @param count how many
     * @param payloadBytes the payload size
     */
    void load(String prefix, int count, int payloadBytes) {
        Env.loadThrough(
                prefix,
                count,
                payloadBytes,
                chunk -> transactions.executeWithoutResult(status -> chunk.run()),
                e ->
                        outbox.schedule(
                                new Event(
                                        e.id(),
                                        Env.TOPIC,
                                        Env.MODULE,
                                        "application/octet-stream",
                                        e.occurredAt().toString(),
                                        e.payload()),
                                e.key()));
    }

    /**
     * Drains a loaded backlog: from starting its scheduler to the moment every record is marked
     * completed (the handler's last success, then its status update, read by polling the table
     * every 2 ms only after that success); CPU metered over the same span.
     *
     * @param env the environment
     * @param messages how many records are loaded
     * @return the run (its statements are not timed one by one)
     */
    Drains.Run drain(Env env, long messages) {
        handler.expect(messages);
        Cpu.Meter cpu = Cpu.start(env);
        long t0 = System.nanoTime();
        startProcessing();
        long t1;
        Cpu used;
        try {
            awaitHandled(Drains.timeout(messages));
            while (incomplete(env) != 0) {
                if (System.nanoTime() - t0 > Drains.timeout(messages).toNanos()) {
                    throw new IllegalStateException(
                            "namastack left " + incomplete(env) + " records incomplete");
                }
                TimeUnit.MILLISECONDS.sleep(2);
            }
            t1 = System.nanoTime();
            used = cpu.stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } finally {
            stopProcessing();
        }
        return new Drains.Run(messages, t1 - t0, new Timings(), new Timings(), used);
    }

    private void awaitHandled(Duration timeout) throws InterruptedException {
        Drains.awaitPeer(
                handler.reached,
                timeout,
                () -> problems() == null ? null : "namastack: " + problems(),
                () ->
                        "namastack handled only "
                                + handler.handled.sum()
                                + " of "
                                + handler.target
                                + " records");
    }

    /**
     * Why the handler failed, if it did.
     *
     * @return the first problem, or null
     */
    String problems() {
        return handler.firstProblem.get();
    }

    @Override
    public void close() {
        try {
            context.close();
        } finally {
            producer.close();
        }
    }
}
