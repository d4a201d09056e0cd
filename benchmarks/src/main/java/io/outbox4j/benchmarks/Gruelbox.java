package io.outbox4j.benchmarks;

import com.gruelbox.transactionoutbox.Dialect;
import com.gruelbox.transactionoutbox.ExecutorSubmitter;
import com.gruelbox.transactionoutbox.Instantiator;
import com.gruelbox.transactionoutbox.Persistor;
import com.gruelbox.transactionoutbox.ThreadLocalContextTransactionManager;
import com.gruelbox.transactionoutbox.TransactionManager;
import com.gruelbox.transactionoutbox.TransactionOutbox;
import com.gruelbox.transactionoutbox.TransactionOutboxEntry;
import com.gruelbox.transactionoutbox.TransactionOutboxListener;
import io.outbox4j.engine.Relay;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The peer measured beside outbox4j in {@code e2e} and {@code latency} (issue 16, item 5): gruelbox
 * transaction-outbox 4.2.268 ({@code com.gruelbox:transactionoutbox-core}), used as its README
 * recommends for an application without a transaction manager of its own:
 *
 * <ul>
 *   <li>{@code TransactionManager.fromDataSource(pool)} on the benchmark's HikariCP pool, {@code
 *       Persistor.forDialect(Dialect.POSTGRESQL_9)} (its {@code DefaultPersistor}; its migrations
 *       create {@code TXNO_OUTBOX} and {@code TXNO_VERSION} in the benchmark database), an {@code
 *       Instantiator.using(...)} that hands out the one {@link KafkaSender};
 *   <li>business code calls {@code outbox.schedule(KafkaEvents.class).send(...)} inside its JDBC
 *       transaction; after the commit gruelbox submits the call to an {@code ExecutorSubmitter}: a
 *       fixed pool of {@value #DEFAULT_THREADS} threads (the relay's default worker count; {@code
 *       BENCH_GRUELBOX_THREADS} overrides it) with a bounded queue of {@value #QUEUE} (its default
 *       executor's) that makes a submitter wait for room when full (one of the policies its javadoc
 *       allows), so no entry is parked for {@code attemptFrequency} by a full queue;
 *   <li>each call sends one Kafka record (the key, payload and five outbox headers of the other
 *       sides) and waits for its acknowledgement ({@code producer.send(record).get()}), so a failed
 *       send fails the call and gruelbox retries it; the producer has the other sides' durability
 *       (acks=all, idempotence) and {@code linger.ms=0}: every call sends one record and waits for
 *       it, where the default 5 ms linger would only add 5 ms to each call (the other sides flush);
 *   <li>the README's background worker: a thread that calls {@code flush()} until it returns false,
 *       then pauses; every other setting is gruelbox's default (attempt frequency 2 min, flush
 *       batch 4096, 5 attempts).
 * </ul>
 */
final class Gruelbox implements AutoCloseable {
    /** The table its migrations create ({@code TXNO_OUTBOX}, folded to lower case). */
    static final String TABLE = "txno_outbox";

    /** Its schema-version table. */
    static final String VERSION_TABLE = "txno_version";

    /** Submitter threads unless {@code BENCH_GRUELBOX_THREADS} says otherwise. */
    static final int DEFAULT_THREADS = Relay.DEFAULT_WORKERS;

    /** Capacity of the submitter's queue: what gruelbox's own default executor uses. */
    static final int QUEUE = 16_384;

    private static final AtomicInteger POOLS = new AtomicInteger();

    /**
     * The service whose calls gruelbox persists and runs after the commit: what the business code
     * calls through {@code outbox.schedule(KafkaEvents.class)}.
     */
    interface KafkaEvents {
        /**
         * Publishes one event.
         *
         * @param id the event id (the downstream idempotency key)
         * @param topic the logical topic, sent as a header
         * @param key the record key
         * @param module the producing module, sent as a header
         * @param contentType the payload's content type, sent as a header
         * @param occurredAt when the event occurred, sent as a header
         * @param payload the record value (UTF-8)
         */
        void send(
                String id,
                String topic,
                String key,
                String module,
                String contentType,
                Instant occurredAt,
                String payload);
    }

    /**
     * The real {@link KafkaEvents}: one record with the same key and the same five outbox headers
     * as the hand-written side ({@link EndToEndScenario#kafkaSend}), then waits for its
     * acknowledgement, so a failure fails the call (and gruelbox retries it). Notes when each
     * event's acknowledgement was seen, if given a map for it.
     */
    static final class KafkaSender implements KafkaEvents {
        private final KafkaProducer<byte[], byte[]> producer;
        private final String kafkaTopic;
        private final Map<String, Long> ackedAt;

        KafkaSender(
                KafkaProducer<byte[], byte[]> producer,
                String kafkaTopic,
                Map<String, Long> ackedAt) {
            this.producer = producer;
            this.kafkaTopic = kafkaTopic;
            this.ackedAt = ackedAt;
        }

        @Override
        public void send(
                String id,
                String topic,
                String key,
                String module,
                String contentType,
                Instant occurredAt,
                String payload) {
            RecordHeaders headers =
                    EndToEndScenario.outboxHeaders(id, topic, module, contentType, occurredAt);
            try {
                producer.send(
                                new ProducerRecord<>(
                                        kafkaTopic, null, utf8(key), utf8(payload), headers))
                        .get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while sending " + id, e);
            } catch (ExecutionException e) {
                throw new IllegalStateException(
                        "sending " + id + " failed: " + e.getCause(), e.getCause());
            }
            if (ackedAt != null) {
                ackedAt.put(id, System.nanoTime());
            }
        }
    }

    /**
     * Counts what became of the scheduled calls and lets a scenario wait for a number of successes
     * (sleeping on a latch; the time of the target success is taken in the callback that reached
     * it).
     */
    private static final class Listener implements TransactionOutboxListener {
        private final LongAdder succeeded = new LongAdder();
        private final LongAdder failed = new LongAdder();
        private final AtomicReference<String> firstProblem = new AtomicReference<>();
        private final AtomicLong reachedAt = new AtomicLong();
        private volatile long target = Long.MAX_VALUE;
        private final CountDownLatch reached = new CountDownLatch(1);

        @Override
        public void success(TransactionOutboxEntry entry) {
            succeeded.increment();
            if (succeeded.sum() >= target && reachedAt.compareAndSet(0, System.nanoTime())) {
                reached.countDown();
            }
        }

        @Override
        public void failure(TransactionOutboxEntry entry, Throwable cause) {
            failed.increment();
            firstProblem.compareAndSet(null, "failure: " + cause);
        }

        @Override
        public void blocked(TransactionOutboxEntry entry, Throwable cause) {
            firstProblem.compareAndSet(null, "blocked: " + cause);
        }

        String problems() {
            return failed.sum() == 0 && firstProblem.get() == null
                    ? null
                    : failed.sum() + " failed calls; first: " + firstProblem.get();
        }
    }

    private final ThreadLocalContextTransactionManager transactionManager;
    private final TransactionOutbox outbox;
    private final ThreadPoolExecutor executor;
    private final Listener listener = new Listener();
    private final Thread flusher;
    private final Duration flushPause;
    private final AtomicReference<Throwable> flushFailure = new AtomicReference<>();
    private volatile boolean stopping;

    /**
     * Builds a gruelbox outbox over the pool (running its migrations); {@link #start()} starts its
     * background flush thread.
     *
     * @param pool the benchmark's pool
     * @param service what the scheduled calls run on
     * @param flushPause how long the background worker pauses when {@code flush()} found nothing
     */
    Gruelbox(DataSource pool, KafkaEvents service, Duration flushPause) {
        this.flushPause = flushPause;
        int n = threads();
        int poolId = POOLS.incrementAndGet();
        AtomicInteger threadIds = new AtomicInteger();
        this.executor =
                new ThreadPoolExecutor(
                        n,
                        n,
                        0L,
                        TimeUnit.MILLISECONDS,
                        new ArrayBlockingQueue<>(QUEUE),
                        r -> {
                            Thread t =
                                    new Thread(
                                            r,
                                            "gruelbox-submit-"
                                                    + poolId
                                                    + "-"
                                                    + threadIds.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        },
                        Gruelbox::waitForRoom);
        this.transactionManager = TransactionManager.fromDataSource(pool);
        this.outbox =
                TransactionOutbox.builder()
                        .transactionManager(transactionManager)
                        .persistor(Persistor.forDialect(Dialect.POSTGRESQL_9))
                        .instantiator(Instantiator.using(type -> service))
                        .submitter(ExecutorSubmitter.builder().executor(executor).build())
                        .listener(listener)
                        .build();
        this.flusher = new Thread(this::flushLoop, "gruelbox-flush");
        flusher.setDaemon(true);
    }

    /**
     * The number of submitter threads: {@value #DEFAULT_THREADS}, or {@code BENCH_GRUELBOX_THREADS}
     * (for experiments).
     *
     * @return the thread count
     */
    static int threads() {
        String v = System.getenv("BENCH_GRUELBOX_THREADS");
        return v == null || v.isBlank() ? DEFAULT_THREADS : Integer.parseInt(v.strip());
    }

    /**
     * Describes the configuration, for a result.
     *
     * @return one line
     */
    static String settings() {
        return "gruelbox transaction-outbox 4.2.268: TransactionManager.fromDataSource (HikariCP"
                + " pool), Persistor.forDialect(POSTGRESQL_9), ExecutorSubmitter on "
                + threads()
                + " threads"
                + (threads() == DEFAULT_THREADS ? "" : " (BENCH_GRUELBOX_THREADS)")
                + " with a queue of "
                + QUEUE
                + " that waits for room, a background thread calling flush() until it returns"
                + " false, other settings its defaults (attemptFrequency 2 min, flushBatchSize"
                + " 4096); each call: producer.send(record).get() with acks=all, idempotence,"
                + " linger.ms=0";
    }

    /**
     * The producer settings of gruelbox's calls: the other sides' durability (acks=all,
     * idempotence) and {@code linger.ms=0}, since each call sends one record and waits for it.
     *
     * @param env the environment
     * @return producer properties
     */
    static Map<String, Object> producerProperties(Env env) {
        return producerProperties(env.kafka().clientProperties());
    }

    /**
     * As {@link #producerProperties(Env)}, for a broker given by its client settings.
     *
     * @param client the client settings (bootstrap servers and any security settings)
     * @return producer properties
     */
    static Map<String, Object> producerProperties(Map<String, Object> client) {
        Map<String, Object> props = EndToEndScenario.producerProperties(client);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        return props;
    }

    /** Drops gruelbox's tables, so that its migrations create them afresh. */
    static void dropTables(Env env) {
        env.execute("DROP TABLE IF EXISTS " + Env.q(TABLE) + ", " + Env.q(VERSION_TABLE));
    }

    /**
     * Loads a backlog through gruelbox itself: {@code count} calls scheduled in transactions of
     * {@value Env#LOAD_CHUNK} ({@link Env#loadThrough}), with the post-commit submission discarded
     * (an outbox whose submitter does nothing) and a clock a day behind, so the rows are what an
     * application left behind a day ago when its immediate submissions never ran: due for the next
     * {@code flush()} (like the other sides' rows, available since about a day ago). Ids {@code
     * <prefix><n>}, keys {@code k-<n mod 1000>}, a payload of {@code payloadBytes} 'x', as {@link
     * Env#load} writes for the other sides.
     *
     * @param env the environment
     * @param prefix the event id prefix
     * @param count how many calls
     * @param payloadBytes the payload size
     */
    static void load(Env env, String prefix, int count, int payloadBytes) {
        ThreadLocalContextTransactionManager tm = TransactionManager.fromDataSource(env.pool());
        TransactionOutbox loader =
                TransactionOutbox.builder()
                        .transactionManager(tm)
                        .persistor(Persistor.forDialect(Dialect.POSTGRESQL_9))
                        .instantiator(
                                Instantiator.using(
                                        type -> {
                                            throw new IllegalStateException(
                                                    "the loader runs no calls");
                                        }))
                        .submitter((entry, localExecutor) -> {})
                        // gruelbox wants each next attempt in the future of its own clock
                        .clockProvider(() -> Clock.offset(Clock.systemUTC(), Duration.ofDays(-1)))
                        .build();
        Env.loadThrough(
                prefix,
                count,
                payloadBytes,
                chunk -> tm.inTransaction(chunk),
                e ->
                        loader.schedule(KafkaEvents.class)
                                .send(
                                        e.id(),
                                        Env.TOPIC,
                                        e.key(),
                                        Env.MODULE,
                                        "application/octet-stream",
                                        e.occurredAt(),
                                        e.payload()));
    }

    /**
     * Drains a backlog loaded by {@link #load}: from starting the background worker ({@code
     * flush()} until it returns false, each flush handing its batch to the submitter) to the last
     * success reported by gruelbox's listener; CPU metered over the same span.
     *
     * @param env the environment
     * @param service what the calls run on
     * @param messages how many successes to wait for
     * @return the run (gruelbox's statements are not timed one by one)
     */
    static Drains.Run drain(Env env, KafkaEvents service, long messages) {
        try (Gruelbox g = new Gruelbox(env.pool(), service, Duration.ofMillis(100))) {
            g.listener.target = messages;
            Cpu.Meter cpu = Cpu.start(env);
            long t0 = System.nanoTime();
            g.start();
            long t1 = g.await(Drains.timeout(messages));
            Cpu used = cpu.stop();
            return new Drains.Run(messages, t1 - t0, new Timings(), new Timings(), used);
        }
    }

    /** Starts the background worker. */
    void start() {
        flusher.start();
    }

    ThreadLocalContextTransactionManager transactionManager() {
        return transactionManager;
    }

    TransactionOutbox outbox() {
        return outbox;
    }

    /**
     * Why this outbox did not run every call cleanly, if it did not.
     *
     * @return the problems, or null
     */
    String problems() {
        String p = listener.problems();
        Throwable f = flushFailure.get();
        return f == null ? p : (p == null ? "" : p + "; ") + "flush() failed: " + f;
    }

    private long await(Duration timeout) {
        try {
            // a failed call is retried only after attemptFrequency (2 min): reported at once
            Drains.awaitPeer(
                    listener.reached,
                    timeout,
                    () -> problems() == null ? null : "gruelbox: " + problems(),
                    () ->
                            "gruelbox ran only "
                                    + listener.succeeded.sum()
                                    + " of "
                                    + listener.target
                                    + " calls");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        return listener.reachedAt.get();
    }

    /** The README's background worker: flush until nothing is due, pause, again. */
    private void flushLoop() {
        while (!stopping) {
            try {
                while (!stopping && outbox.flush()) {
                    // keep flushing while work comes back
                }
            } catch (RuntimeException e) {
                flushFailure.compareAndSet(null, e);
            }
            if (!stopping) {
                LockSupport.parkNanos(flushPause.toNanos());
            }
        }
    }

    /** Makes a submitter wait for room in a full queue instead of dropping the call. */
    private static void waitForRoom(Runnable task, ThreadPoolExecutor executor) {
        if (executor.isShutdown()) {
            throw new RejectedExecutionException("gruelbox submitter is shut down");
        }
        try {
            executor.getQueue().put(task);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RejectedExecutionException("interrupted while waiting for room", e);
        }
    }

    /** Stops the background worker, then lets the submitted calls finish. */
    @Override
    public void close() {
        stopping = true;
        LockSupport.unpark(flusher);
        try {
            if (flusher.isAlive()) {
                flusher.join(30_000);
            }
            executor.shutdown();
            if (!executor.awaitTermination(60, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            executor.shutdownNow();
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
