package io.outbox4j.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import io.outbox4j.testservices.ServerSupport;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The standalone relay as a process, the way Kubernetes runs it: started with one command and a
 * config file against a real PostgreSQL and a real Kafka broker, probed over HTTP, and stopped with
 * SIGTERM ({@link Process#destroy()}) in the middle of its work.
 */
class RelayProcessTest {
    private static final int KEYS = 20;
    private static final int PER_KEY = 100;
    private static final int MESSAGES = KEYS * PER_KEY;
    private static final String SEQ = "seq";

    private static Path logs;

    private final List<Process> processes = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeAll
    static void logDirectory() throws IOException {
        logs = Files.createDirectories(Path.of("target", "relay-process-logs"));
    }

    @AfterEach
    void killLeftovers() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
    }

    // --------------------------------------------------------------------------------------------

    @Test
    void
            drainsKeyedMessagesInKeyOrder_servesHealthAndMetrics_andOnSigtermExits0HavingGivenBackItsLeases()
                    throws Exception {
        Outbox o = Outbox.create("relay_process", "relay-process-", 4);
        enqueue(o);

        try (Consumer consumer = o.consumer()) {
            Map<String, String> settings = o.relaySettings();
            settings.put("relay.batch-size", "50");
            settings.put("relay.workers", "4");
            settings.put("relay.lease", "5s");
            settings.put("relay.poll-interval", "100ms");
            settings.put("relay.shutdown-timeout", "10s");
            settings.put("metrics.statistics-interval", "1s");
            Map<String, String> env = storePassword(o.pg());

            int portA = ServerSupport.freePort();
            settings.put("relay.owner", "relay-a");
            settings.put("http.port", String.valueOf(portA));
            Map<String, String> withConsole = new HashMap<>(settings);
            withConsole.put("console.enabled", "true"); // read-only, no credentials
            Process a = start("relay-a", withConsole, env);

            awaitStatus(a, portA, "/health/ready", 200, Duration.ofSeconds(60));
            assertThat(get(portA, "/health/live").statusCode()).isEqualTo(200);
            await(
                    a,
                    () -> consumer.distinct() >= MESSAGES / 4,
                    Duration.ofSeconds(90),
                    "a quarter published");

            HttpResponse<String> metrics = get(portA, "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(v -> assertThat(v).startsWith("text/plain; version=0.0.4"));
            assertThat(metrics.body())
                    .as("outbox-micrometer's meters, as the dashboard and alerts name them")
                    .contains("outbox_relay_state{state=\"running\"} 1")
                    .containsPattern(
                            "outbox_deliveries_total\\{outcome=\"completed\",topic=\""
                                    + o.topic()
                                    + "\"} [1-9]")
                    .containsPattern("outbox_publish_seconds_count\\{[^}]*} [1-9]")
                    .containsPattern(
                            "outbox_messages\\{state=\"dead\",topic=\"" + o.topic() + "\"} 0")
                    .doesNotContain("outbox4j_relay_");
            HttpResponse<String> console = get(portA, "/console/");
            assertThat(console.statusCode()).isEqualTo(200);
            assertThat(console.headers().firstValue("Content-Security-Policy")).isPresent();
            assertThat(console.body())
                    .as("the relay's own console: its state and its topic")
                    .contains("relay-a")
                    .contains(o.topic())
                    .contains("Read-only");

            long sigterm = System.nanoTime();
            a.destroy(); // SIGTERM
            assertThat(a.waitFor(25, TimeUnit.SECONDS)).as(log("relay-a")).isTrue();
            long stopMillis = (System.nanoTime() - sigterm) / 1_000_000;
            assertThat(a.exitValue()).as(log("relay-a")).isZero();
            assertThat(stopMillis).as("SIGTERM to exit, in ms").isLessThan(15_000);
            assertThat(log("relay-a")).contains("SIGTERM: draining").contains("relay drained in");

            OutboxStatistics afterA = o.store().statistics(Instant.now());
            assertThat(afterA.total().leased())
                    .as("leases still held after relay-a exited (it must finish or give back all)")
                    .isZero();
            assertThat(afterA.total().ready() + afterA.total().delayed())
                    .as("messages left for the second relay (SIGTERM came mid-work)")
                    .isPositive();

            int portB = ServerSupport.freePort();
            settings.put("relay.owner", "relay-b");
            settings.put("http.port", String.valueOf(portB));
            Process b = start("relay-b", settings, env);
            await(
                    b,
                    () -> consumer.distinct() == MESSAGES,
                    Duration.ofMinutes(2),
                    "every message published");
            b.destroy();
            assertThat(b.waitFor(25, TimeUnit.SECONDS)).as(log("relay-b")).isTrue();
            assertThat(b.exitValue()).as(log("relay-b")).isZero();

            consumer.assertEveryKeyInOrderWithoutDuplicates();
            OutboxStatistics end = o.store().statistics(Instant.now());
            assertThat(
                            List.of(
                                    end.total().ready(),
                                    end.total().delayed(),
                                    end.total().leased(),
                                    end.total().dead()))
                    .as("ready, delayed, leased, dead at the end")
                    .containsExactly(0L, 0L, 0L, 0L);
        }
    }

    @Test
    void withoutItsDatabase_isLiveButNotReady_andSigtermStillExits0() throws Exception {
        int port = ServerSupport.freePort();
        Map<String, String> settings = new HashMap<>();
        settings.put(
                "store.url", "jdbc:postgresql://127.0.0.1:" + ServerSupport.freePort() + "/none");
        settings.put("store.connect-timeout", "500ms");
        settings.put("publisher.uri", "kafka://127.0.0.1:" + ServerSupport.freePort());
        settings.put("relay.poll-interval", "200ms");
        settings.put("metrics.statistics-interval", "1s");
        settings.put("http.port", String.valueOf(port));
        Process p = start("relay-no-db", settings, Map.of());

        awaitStatus(p, port, "/health/live", 200, Duration.ofSeconds(60));
        HttpResponse<String> ready = get(port, "/health/ready");
        assertThat(ready.statusCode()).isEqualTo(503);
        assertThat(ready.body()).startsWith("not ready: the store failed: ").contains("refused");
        await(
                p,
                () ->
                        get(port, "/metrics")
                                .body()
                                .matches(
                                        "(?s)(?=.*outbox_store_errors_total\\{[^}]*} [1-9])"
                                                + "(?=.*outbox_statistics_errors_total [1-9]).*"),
                Duration.ofSeconds(30),
                "a store error and a failed statistics read counted");
        assertThat(get(port, "/nothing").statusCode()).isEqualTo(404);

        p.destroy();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).as(log("relay-no-db")).isTrue();
        assertThat(p.exitValue()).as(log("relay-no-db")).isZero();
    }

    @Test
    void brokerStopped_oneMessageInFlight_notReadyWithinMaxPublishStall_readyOnceItReturns()
            throws Exception {
        PostgresServer pg = PostgresServer.shared();
        String url = pg.createDatabase("relay_broker_down");
        Jdbi jdbi = Jdbi.create(url, pg.user(), pg.password());
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        try (KafkaServer kafka = KafkaServer.startEmbedded()) {
            String topic = "relay-broker-down";
            kafka.createTopic(topic, 1, Map.of());
            int port = ServerSupport.freePort();
            Map<String, String> settings = reaching(url, pg, kafka);
            settings.put("relay.delivery-timeout", "1s");
            settings.put("relay.backoff-base", "1s");
            settings.put("relay.backoff-max", "2s");
            settings.put("relay.max-attempts", "1000");
            settings.put("relay.poll-interval", "200ms");
            settings.put("relay.max-publish-stall", "3s");
            settings.put("http.port", String.valueOf(port));
            Process p = start("relay-broker-down", settings, storePassword(pg));
            awaitStatus(p, port, "/health/ready", 200, Duration.ofSeconds(60));

            kafka.stop();
            long enqueued = System.nanoTime();
            Message one =
                    Message.builder()
                            .id("o-1")
                            .topic(topic)
                            .key("order-1")
                            .module("relay-process-test")
                            .payload("{}")
                            .build();
            jdbi.useTransaction(h -> store.enqueue(h, one));
            awaitStatus(p, port, "/health/ready", 503, Duration.ofSeconds(30));
            long tookMillis = (System.nanoTime() - enqueued) / 1_000_000;
            HttpResponse<String> notReady = get(port, "/health/ready");
            assertThat(notReady.body())
                    .startsWith("not ready: publishing has been stalled for ")
                    .contains("(limit 3s)")
                    .contains("relay.max-publish-stall");
            assertThat(tookMillis)
                    .as("enqueue to 503, in ms (max-publish-stall 3s, poll interval 200ms)")
                    .isLessThanOrEqualTo(3_000 + 2_000);
            assertThat(get(port, "/metrics").body())
                    .containsPattern("outbox_relay_publish_failed_calls [1-9]")
                    .containsPattern("outbox_relay_publish_stalled_seconds [3-9]");

            kafka.start();
            awaitStatus(p, port, "/health/ready", 200, Duration.ofSeconds(60));
            assertThat(get(port, "/metrics").body())
                    .contains("outbox_relay_publish_failed_calls 0")
                    .contains("outbox_relay_publish_stalled_seconds 0");
            p.destroy();
            assertThat(p.waitFor(20, TimeUnit.SECONDS)).as(log("relay-broker-down")).isTrue();
        }
    }

    // --------------------------------------------------------------------------------------------

    /**
     * Cross-process wake-up (docs/relay.md): the relay runs in a child JVM with a 30 s poll
     * interval; this JVM commits through its own store instance, whose signal wakes the relay's
     * LISTEN connection. The relay's listener killed by the database reconnects, and a message
     * committed meanwhile is published too.
     */
    @Test
    void
            commitsInAnotherProcess_wakeTheRelay_withinASecondDespiteA30sPoll_andAfterItsListenerIsKilled()
                    throws Exception {
        Outbox o = Outbox.create("relay_wake_up", "relay-wake-up-", 1);

        try (Consumer consumer = o.consumer()) {
            Map<String, String> settings = o.relaySettings();
            settings.put("relay.poll-interval", "30s");
            int port = ServerSupport.freePort();
            settings.put("relay.owner", "relay-w");
            settings.put("http.port", String.valueOf(port));
            Process relay = start("relay-w", settings, storePassword(o.pg()));
            awaitStatus(relay, port, "/health/ready", 200, Duration.ofSeconds(60));
            await(
                    relay,
                    () -> listeners(o.jdbi()) == 1,
                    Duration.ofSeconds(30),
                    "the relay's LISTEN");
            // Warm the path (the producer's first send fetches metadata), then measure.
            int sent = 0;
            commitAndAwait(relay, o, ++sent, consumer, Duration.ofSeconds(20));
            List<Long> micros = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                micros.add(commitAndAwait(relay, o, ++sent, consumer, Duration.ofSeconds(5)));
            }
            Collections.sort(micros);
            System.out.printf(
                    "[wake-up] commit-to-consumed with a 30s poll, relay in a child JVM: p50 %.1f ms,"
                            + " p90 %.1f ms, max %.1f ms over %d messages%n",
                    micros.get(micros.size() / 2) / 1000.0,
                    micros.get(micros.size() * 9 / 10) / 1000.0,
                    micros.get(micros.size() - 1) / 1000.0,
                    micros.size());
            assertThat(micros.get(micros.size() - 1))
                    .as("slowest commit-to-consumed, in microseconds, with a 30 s poll interval")
                    .isLessThan(1_000_000L);

            int killed =
                    o.jdbi()
                            .withHandle(
                                    h ->
                                            h.createQuery(
                                                            "SELECT count(pg_terminate_backend(pid)) FROM"
                                                                    + " pg_stat_activity WHERE query LIKE"
                                                                    + " 'LISTEN %'")
                                                    .mapTo(Integer.class)
                                                    .one());
            assertThat(killed).as("the relay's listener terminated").isEqualTo(1);
            // Committed while the relay is deaf: published once it listens again (it wakes then).
            commitAndAwait(relay, o, ++sent, consumer, Duration.ofSeconds(10));
            await(
                    relay,
                    () -> listeners(o.jdbi()) == 1,
                    Duration.ofSeconds(30),
                    "the LISTEN again");
            long after = commitAndAwait(relay, o, ++sent, consumer, Duration.ofSeconds(5));
            assertThat(after)
                    .as("commit-to-consumed after the reconnection, in microseconds")
                    .isLessThan(1_000_000L);
            assertThat(relay.isAlive()).isTrue();
        }
    }

    /**
     * The settings that point a relay at a database and a Kafka (store.url, store.user,
     * publisher.uri), in a map the test adds its own to; the password goes in its environment
     * ({@link #storePassword}).
     */
    private static Map<String, String> reaching(String url, PostgresServer pg, KafkaServer kafka) {
        Map<String, String> settings = new HashMap<>();
        settings.put("store.url", url);
        settings.put("store.user", pg.user());
        settings.put("publisher.uri", "kafka://" + kafka.bootstrapServers());
        return settings;
    }

    /** A relay's environment that holds the database's password. */
    private static Map<String, String> storePassword(PostgresServer pg) {
        return Map.of("OUTBOX4J_STORE_PASSWORD", pg.password());
    }

    /** A fresh database with the outbox table on the shared PostgreSQL, and a fresh topic. */
    private record Outbox(
            PostgresServer pg,
            KafkaServer kafka,
            String url,
            Jdbi jdbi,
            JdbiOutboxStore store,
            String topic) {
        static Outbox create(String database, String topicPrefix, int partitions) {
            CompletableFuture<KafkaServer> kafkaStarting =
                    CompletableFuture.supplyAsync(KafkaServer::shared);
            PostgresServer pg = PostgresServer.shared();
            KafkaServer kafka = kafkaStarting.join();
            String url = pg.createDatabase(database);
            Jdbi jdbi = Jdbi.create(url, pg.user(), pg.password());
            JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
            store.createSchemaIfAbsent();
            String topic = topicPrefix + System.nanoTime();
            kafka.createTopic(topic, partitions, Map.of());
            return new Outbox(pg, kafka, url, jdbi, store, topic);
        }

        /** A consumer of this outbox's topic. */
        Consumer consumer() {
            return new Consumer(kafka.bootstrapServers(), topic);
        }

        /** The settings that point a relay at this outbox and its Kafka ({@link #reaching}). */
        Map<String, String> relaySettings() {
            return reaching(url, pg, kafka);
        }
    }

    private static int listeners(Jdbi jdbi) {
        return jdbi.withHandle(
                h ->
                        h.createQuery(
                                        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'")
                                .mapTo(Integer.class)
                                .one());
    }

    /** Commits message number {@code n} and waits until the consumer saw it; returns the micros. */
    private static long commitAndAwait(
            Process relay, Outbox o, int n, Consumer consumer, Duration timeout)
            throws InterruptedException {
        Message m =
                Message.builder()
                        .id("w-" + n)
                        .topic(o.topic())
                        .key("key-w")
                        .module("relay-process-test")
                        .payload("{}")
                        .header(SEQ, String.valueOf(n))
                        .build();
        o.jdbi().useTransaction(h -> o.store().enqueue(h, m));
        long committed = System.nanoTime();
        Awaitility.await("message " + n + " consumed (see target/relay-process-logs)")
                .dontCatchUncaughtExceptions()
                .atMost(timeout)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofNanos(200_000)) // a latency in microseconds is measured
                .failFast("the relay exited before message " + n, () -> !relay.isAlive())
                .until(() -> consumer.distinct() >= n);
        return (System.nanoTime() - committed) / 1000;
    }

    private static void enqueue(Outbox o) {
        List<Message> batch = new ArrayList<>();
        for (int seq = 0; seq < PER_KEY; seq++) {
            for (int k = 0; k < KEYS; k++) {
                batch.add(
                        Message.builder()
                                .id("m-" + k + "-" + seq)
                                .topic(o.topic())
                                .key("key-" + k)
                                .module("relay-process-test")
                                .payload("{\"seq\":" + seq + "}")
                                .header(SEQ, String.valueOf(seq))
                                .build());
            }
            if (batch.size() >= 400) {
                List<Message> chunk = List.copyOf(batch);
                o.jdbi().useTransaction(h -> o.store().enqueueAll(h, chunk));
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            o.jdbi().useTransaction(h -> o.store().enqueueAll(h, batch));
        }
    }

    private Process start(String name, Map<String, String> settings, Map<String, String> env)
            throws IOException {
        Properties p = new Properties();
        p.putAll(settings);
        Path config = logs.resolve(name + ".properties");
        try (var w = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
            p.store(w, "written by RelayProcessTest");
        }
        List<String> command =
                List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx256m",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        classpath(),
                        "io.outbox4j.relay.Outbox4j",
                        "relay",
                        "--config",
                        config.toString());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.redirectOutput(logs.resolve(name + ".log").toFile());
        pb.environment().putAll(env);
        Process process = pb.start();
        processes.add(process);
        return process;
    }

    /** This module's classes and its runtime dependencies, as the distribution has them. */
    private static String classpath() throws IOException {
        Path deps = Path.of("target", "runtime-classpath.txt");
        String runtime =
                Files.exists(deps)
                        ? Files.readString(deps, StandardCharsets.UTF_8).strip()
                        : System.getProperty("java.class.path");
        return Path.of("target", "classes").toAbsolutePath() + File.pathSeparator + runtime;
    }

    private static String log(String name) {
        try {
            String text = Files.readString(logs.resolve(name + ".log"), StandardCharsets.UTF_8);
            return "log of " + name + ":\n" + text.substring(Math.max(0, text.length() - 6000));
        } catch (IOException e) {
            return "no log of " + name + ": " + e;
        }
    }

    private HttpResponse<String> get(int port, String path) {
        try {
            return http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("GET " + path + " on port " + port + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void awaitStatus(Process p, int port, String path, int status, Duration timeout)
            throws InterruptedException {
        await(
                p,
                () -> {
                    try {
                        return get(port, path).statusCode() == status;
                    } catch (IllegalStateException notListening) {
                        return false;
                    }
                },
                timeout,
                path + " answering " + status);
    }

    private static void await(Process p, BooleanSupplier done, Duration timeout, String what)
            throws InterruptedException {
        Awaitility.await(what + " (see target/relay-process-logs)")
                .dontCatchUncaughtExceptions()
                .atMost(timeout)
                .pollInterval(Duration.ofMillis(100))
                .failFast(
                        () -> {
                            if (!p.isAlive()) {
                                throw new AssertionError(
                                        "the relay exited ("
                                                + p.exitValue()
                                                + ") before "
                                                + what
                                                + "; see target/relay-process-logs");
                            }
                        })
                .until(done::getAsBoolean);
    }

    /** Reads the topic back, remembering each key's sequence numbers in arrival order. */
    private static final class Consumer implements AutoCloseable {
        private final Map<String, List<Integer>> perKey = new HashMap<>();
        private final Set<String> ids = new HashSet<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;
        private volatile RuntimeException failure;

        Consumer(String bootstrap, String topic) {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, "relay-process-" + System.nanoTime());
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            KafkaConsumer<byte[], byte[]> consumer =
                    new KafkaConsumer<>(
                            p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            consumer.subscribe(List.of(topic));
            thread =
                    new Thread(
                            () -> {
                                try (consumer) {
                                    while (running.get()) {
                                        for (ConsumerRecord<byte[], byte[]> r :
                                                consumer.poll(Duration.ofMillis(100))) {
                                            record(r);
                                        }
                                    }
                                } catch (RuntimeException e) {
                                    failure = e;
                                }
                            },
                            "relay-process-test-consumer");
            thread.setDaemon(true);
            thread.start();
        }

        private synchronized void record(ConsumerRecord<byte[], byte[]> r) {
            String key = new String(r.key(), StandardCharsets.UTF_8);
            perKey.computeIfAbsent(key, k -> new ArrayList<>())
                    .add(Integer.parseInt(header(r, SEQ)));
            ids.add(header(r, OutboxHeaders.ID));
        }

        private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
            Header h = r.headers().lastHeader(name);
            if (h == null) {
                throw new IllegalStateException("record without header " + name);
            }
            return new String(h.value(), StandardCharsets.UTF_8);
        }

        synchronized int distinct() {
            if (failure != null) {
                throw failure;
            }
            return ids.size();
        }

        /** Each key's messages arrived 0, 1, 2, … with no gap, no reordering and no duplicate. */
        synchronized void assertEveryKeyInOrderWithoutDuplicates() {
            assertThat(ids).hasSize(MESSAGES);
            assertThat(perKey).hasSize(KEYS);
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < PER_KEY; i++) {
                expected.add(i);
            }
            perKey.forEach(
                    (key, seqs) ->
                            assertThat(Collections.unmodifiableList(seqs))
                                    .as("sequence numbers of %s in arrival order", key)
                                    .isEqualTo(expected));
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(5_000);
        }
    }
}
