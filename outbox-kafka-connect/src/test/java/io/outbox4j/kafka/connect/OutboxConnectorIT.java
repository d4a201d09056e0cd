package io.outbox4j.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.io.IOException;
import java.net.ServerSocket;
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
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.cli.ConnectDistributed;
import org.apache.kafka.connect.runtime.Connect;
import org.apache.kafka.connect.runtime.distributed.DistributedHerder;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/**
 * The connector in a real Kafka Connect cluster: distributed workers started in this JVM against
 * the test Kafka broker and PostgreSQL, loading the connector from the plugin directory the build
 * laid out (plugin.path), isolated from this module's classes, which are not on the test class
 * path. A counting consumer reads every record and checks that no message is lost and that each
 * key's messages are first seen in enqueue order, while a worker leaves and another joins.
 *
 * <p>The number of messages is the build property {@code it.messages} (100 000 unless {@code
 * -Dit.messages=N} is given); the figures of a run are written to {@code
 * target/connect-it-figures.json}.
 */
class OutboxConnectorIT {
    private static final String CONNECTOR_CLASS = "io.outbox4j.kafka.connect.OutboxSourceConnector";
    private static final String TOPIC = "it.orders";
    private static final int PARTITIONS = 6;
    private static final int KEYS = 1_000;
    private static final int TASKS = 3;
    private static final long LEASE_MS = 10_000;
    private static final int MAX_IN_FLIGHT = 2_000;
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(4);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private static KafkaServer kafka;
    private static String jdbcUrl;
    private static PostgresServer pg;
    private static Jdbi jdbi;
    private static JdbiOutboxStore store;
    private static Path pluginPath;
    private static final List<Connect<DistributedHerder>> workers = new ArrayList<>();
    private static String restA;

    @BeforeAll
    static void startCluster() throws Exception {
        pluginPath = Path.of(System.getProperty("outbox4j.connect.pluginPath", "target/plugin"));
        assertThat(pluginPath.resolve("outbox-kafka-connect"))
                .as("the plugin directory (built by 'mvn package'); run the test with 'mvn verify'")
                .isDirectory();
        kafka = KafkaServer.shared();
        kafka.createTopic(TOPIC, PARTITIONS, Map.of());
        pg = PostgresServer.shared();
        jdbcUrl = pg.createDatabase("outbox_connect_it");
        jdbi = Jdbi.create(jdbcUrl, pg.user(), pg.password());
        store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        restA = "http://127.0.0.1:" + freePort();
        startWorker("a", restA);
    }

    @AfterAll
    static void stopCluster() {
        for (Connect<DistributedHerder> w : workers) {
            w.stop();
        }
    }

    @Test
    void pluginDirectory_holdsTheConnectorAndItsDependencies_butNoKafkaOrSlf4jJars()
            throws IOException {
        List<String> jars;
        try (Stream<Path> files = Files.list(pluginPath.resolve("outbox-kafka-connect"))) {
            jars =
                    files.map(p -> p.getFileName().toString())
                            .filter(n -> n.endsWith(".jar"))
                            .sorted()
                            .collect(Collectors.toList());
        }
        assertThat(jars)
                .anyMatch(n -> n.startsWith("outbox-kafka-connect-"))
                .anyMatch(n -> n.startsWith("outbox-api-"))
                .anyMatch(n -> n.startsWith("outbox-store-jdbi-"))
                .anyMatch(n -> n.startsWith("jdbi3-core-"))
                .anyMatch(n -> n.startsWith("postgresql-"))
                .noneMatch(n -> n.startsWith("kafka") || n.startsWith("connect-"))
                .noneMatch(n -> n.startsWith("slf4j"));
    }

    @Test
    void validationThroughTheWorker_reportsAMissingTableOnItsSetting() throws Exception {
        Map<String, String> config = connectorConfig();
        config.put("name", "validation-only");
        config.put(OutboxSourceConnectorConfig.TABLE, "no_such_outbox");
        HttpResponse<String> r =
                HTTP.send(
                        HttpRequest.newBuilder(
                                        URI.create(
                                                restA
                                                        + "/connector-plugins/OutboxSourceConnector/config/validate"))
                                .timeout(Duration.ofSeconds(60))
                                .header("Content-Type", "application/json")
                                .PUT(HttpRequest.BodyPublishers.ofString(json(config)))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(errors(r.body()))
                .singleElement()
                .asString()
                .startsWith("outbox.table 'no_such_outbox' cannot be read");
    }

    @Test
    void threeTasks_relayEveryMessage_keepKeyOrder_whileAWorkerLeavesAndAnotherJoins(
            TestReporter reporter) throws Exception {
        int messages = Integer.getInteger("outbox4j.connect.messages", 100_000);
        enqueue(0, messages);

        String restB = "http://127.0.0.1:" + freePort();
        Connect<DistributedHerder> workerB = startWorker("b", restB);
        try (Counter counter = new Counter(messages)) {
            long t0 = System.nanoTime();
            HttpResponse<String> created =
                    HTTP.send(
                            HttpRequest.newBuilder(URI.create(restA + "/connectors/outbox/config"))
                                    .timeout(Duration.ofSeconds(60))
                                    .header("Content-Type", "application/json")
                                    .PUT(
                                            HttpRequest.BodyPublishers.ofString(
                                                    json(connectorConfig())))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertThat(created.statusCode())
                    .as("creating the connector: %s", errors(created.body()))
                    .isEqualTo(201);

            await("a third of the messages", () -> counter.distinct() >= messages / 3);
            int atStop = counter.distinct();
            double stopAt = seconds(t0);
            workerB.stop();
            workers.remove(workerB);
            double stopped = seconds(t0);
            await("two thirds of the messages", () -> counter.distinct() >= 2 * messages / 3);
            int atJoin = counter.distinct();
            double joinAt = seconds(t0);
            String restC = "http://127.0.0.1:" + freePort();
            startWorker("c", restC);
            double joined = seconds(t0);
            await("every message", () -> counter.distinct() >= messages);
            double allSeen = seconds(t0);
            await("an empty outbox (every message completed)", () -> outboxRows() == 0);
            double empty = seconds(t0);
            String status = status();

            int lost = messages - counter.distinct();
            Map<String, String> figures = new LinkedHashMap<>();
            figures.put("messages", Integer.toString(messages));
            figures.put("keys", Integer.toString(KEYS));
            figures.put("tasks", Integer.toString(TASKS));
            figures.put("workerStoppedAtMessages", Integer.toString(atStop));
            figures.put("workerStoppedAtSeconds", String.format("%.1f", stopAt));
            figures.put("workerStopTookSeconds", String.format("%.1f", stopped - stopAt));
            figures.put("workerJoinedAtMessages", Integer.toString(atJoin));
            figures.put("workerJoinedAtSeconds", String.format("%.1f", joinAt));
            figures.put("workerStartTookSeconds", String.format("%.1f", joined - joinAt));
            figures.put("allSeenSeconds", String.format("%.1f", allSeen));
            figures.put("outboxEmptySeconds", String.format("%.1f", empty));
            figures.put("lost", Integer.toString(lost));
            figures.put("duplicates", Long.toString(counter.duplicates()));
            figures.put("orderViolations", Integer.toString(counter.orderViolations()));
            reporter.publishEntry(figures);
            Files.writeString(
                    Path.of("target", "connect-it-figures.json"),
                    figures.entrySet().stream()
                            .map(e -> quote(e.getKey()) + ": " + e.getValue())
                            .collect(Collectors.joining(",\n  ", "{\n  ", "\n}\n")));
            assertThat(counter.foreign()).as("records of unknown messages or wrong keys").isZero();
            assertThat(lost).as("lost messages").isZero();
            assertThat(counter.orderViolations())
                    .as(
                            "keys whose messages were first seen out of enqueue order, e.g. %s",
                            counter.firstViolation())
                    .isZero();
            // Every duplicate comes from a lease a stopped task held: at most its unacknowledged
            // messages, for each task stopped by the two rebalances.
            assertThat(counter.duplicates()).isLessThanOrEqualTo(2L * TASKS * MAX_IN_FLIGHT);
            assertThat(status).doesNotContain("FAILED");
        }
    }

    // ---------------------------------------------------------------------------------------------

    private static Map<String, String> connectorConfig() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("connector.class", CONNECTOR_CLASS);
        c.put("tasks.max", Integer.toString(TASKS));
        c.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        c.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        c.put("header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter");
        c.put("producer.override.enable.idempotence", "true");
        c.put("producer.override.acks", "all");
        c.put("producer.override.max.in.flight.requests.per.connection", "5");
        c.put(OutboxSourceConnectorConfig.JDBC_URL, jdbcUrl);
        c.put(OutboxSourceConnectorConfig.JDBC_USER, pg.user());
        c.put(OutboxSourceConnectorConfig.JDBC_PASSWORD, pg.password());
        c.put(OutboxSourceConnectorConfig.LEASE_MS, Long.toString(LEASE_MS));
        c.put(OutboxSourceConnectorConfig.MAX_IN_FLIGHT, Integer.toString(MAX_IN_FLIGHT));
        return c;
    }

    private static Connect<DistributedHerder> startWorker(String name, String rest) {
        Map<String, String> p = new HashMap<>();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("group.id", "outbox-connect-it");
        p.put("client.id", "outbox-connect-it-" + name);
        p.put("listeners", rest);
        p.put("rest.advertised.host.name", "127.0.0.1");
        p.put("plugin.path", pluginPath.toAbsolutePath().toString());
        // Only ServiceLoader manifests: the connector ships one, and scanning the test class path
        // by reflection would cost seconds per worker.
        p.put("plugin.discovery", "service_load");
        p.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        p.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        p.put("config.storage.topic", "outbox-connect-it-configs");
        p.put("offset.storage.topic", "outbox-connect-it-offsets");
        p.put("status.storage.topic", "outbox-connect-it-status");
        p.put("config.storage.replication.factor", "1");
        p.put("offset.storage.replication.factor", "1");
        p.put("offset.storage.partitions", "1");
        p.put("status.storage.replication.factor", "1");
        p.put("status.storage.partitions", "1");
        // Reassign the tasks of a worker that left after 1 s, not the default 5 minutes.
        p.put("scheduled.rebalance.max.delay.ms", "1000");
        p.put("offset.flush.interval.ms", "1000");
        Connect<DistributedHerder> connect = new ConnectDistributed().startConnect(p);
        workers.add(connect);
        return connect;
    }

    private static void enqueue(int from, int to) {
        Instant now = Instant.now();
        int chunk = 1_000;
        for (int start = from; start < to; start += chunk) {
            List<Message> batch = new ArrayList<>(chunk);
            for (int i = start; i < Math.min(to, start + chunk); i++) {
                batch.add(
                        Message.builder()
                                .id("m-" + i)
                                .topic(TOPIC)
                                .key("k-" + (i % KEYS))
                                .module("it")
                                .contentType("text/plain")
                                .payload("payload of m-" + i)
                                .header("seq", Integer.toString(i / KEYS))
                                .occurredAt(now)
                                .build());
            }
            jdbi.useTransaction(h -> store.enqueueAll(h, batch));
        }
    }

    private static int outboxRows() {
        return jdbi.withHandle(
                h ->
                        h.createQuery("SELECT count(*) FROM outbox_message")
                                .mapTo(Integer.class)
                                .one());
    }

    private static String status() throws IOException, InterruptedException {
        return HTTP.send(
                        HttpRequest.newBuilder(URI.create(restA + "/connectors/outbox/status"))
                                .timeout(Duration.ofSeconds(30))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /** Waits for a condition, failing early with the connector's status when a task failed. */
    private static void await(String what, BooleanSupplier condition) throws Exception {
        AtomicLong nextStatus = new AtomicLong(System.nanoTime());
        try {
            Awaitility.await(what)
                    .dontCatchUncaughtExceptions()
                    .atMost(RUN_TIMEOUT)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(100))
                    .failFast(
                            () -> { // the connector's status, every 2 s
                                if (System.nanoTime() - nextStatus.get() < 0) {
                                    return;
                                }
                                String s = status();
                                if (s.contains("\"FAILED\"")) {
                                    fail(
                                            "the connector failed while waiting for "
                                                    + what
                                                    + ": "
                                                    + s);
                                }
                                nextStatus.set(System.nanoTime() + Duration.ofSeconds(2).toNanos());
                            })
                    .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            fail("timed out after " + RUN_TIMEOUT + " waiting for " + what + "; " + status());
        }
    }

    /** The error messages of a validation answer (Connect's JSON, read without a JSON library). */
    private static List<String> errors(String validation) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\"errors\":\\[\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(validation);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    private static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    private static String json(Map<String, String> map) {
        return map.entrySet().stream()
                .map(e -> quote(e.getKey()) + ":" + quote(e.getValue()))
                .collect(Collectors.joining(",", "{", "}"));
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /**
     * Reads every partition of the topic from the beginning and counts: how often each message
     * arrived, and whether each key's messages were first seen in enqueue order.
     */
    private static final class Counter implements AutoCloseable {
        private static final Pattern ID = Pattern.compile("m-(\\d+)");
        private final int[] seen;
        private final int[] lastFirstSeenSeq = new int[KEYS];
        private final AtomicInteger distinct = new AtomicInteger();
        private final AtomicInteger violations = new AtomicInteger();
        private final AtomicInteger foreign = new AtomicInteger();
        private final AtomicLong duplicates = new AtomicLong();
        private volatile String firstViolation = "none";
        private final Thread thread;
        private volatile boolean closed;
        private volatile Throwable failure;

        Counter(int messages) {
            seen = new int[messages];
            Arrays.fill(lastFirstSeenSeq, -1);
            thread = new Thread(this::run, "outbox-connect-it-consumer");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            Map<String, Object> props = kafka.clientProperties();
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
            props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                List<TopicPartition> partitions = new ArrayList<>();
                for (int p = 0; p < PARTITIONS; p++) {
                    partitions.add(new TopicPartition(TOPIC, p));
                }
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                while (!closed) {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                        count(r);
                    }
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        private void count(ConsumerRecord<byte[], byte[]> r) {
            Header idHeader = r.headers().lastHeader(OutboxHeaders.ID);
            Matcher m =
                    idHeader == null
                            ? null
                            : ID.matcher(new String(idHeader.value(), StandardCharsets.UTF_8));
            if (m == null || !m.matches() || Integer.parseInt(m.group(1)) >= seen.length) {
                foreign.incrementAndGet();
                return;
            }
            int i = Integer.parseInt(m.group(1));
            int key = i % KEYS;
            int seq = i / KEYS;
            if (r.key() == null
                    || !("k-" + key).equals(new String(r.key(), StandardCharsets.UTF_8))) {
                foreign.incrementAndGet();
                return;
            }
            if (seen[i]++ > 0) {
                duplicates.incrementAndGet();
                return;
            }
            if (seq < lastFirstSeenSeq[key]) {
                if (violations.getAndIncrement() == 0) {
                    firstViolation =
                            "key k-" + key + ": seq " + seq + " after " + lastFirstSeenSeq[key];
                }
            } else {
                lastFirstSeenSeq[key] = seq;
            }
            distinct.incrementAndGet();
        }

        int distinct() {
            if (failure != null) {
                throw new IllegalStateException("the counting consumer failed", failure);
            }
            return distinct.get();
        }

        long duplicates() {
            return duplicates.get();
        }

        int orderViolations() {
            return violations.get();
        }

        String firstViolation() {
            return firstViolation;
        }

        int foreign() {
            return foreign.get();
        }

        @Override
        public void close() throws InterruptedException {
            closed = true;
            thread.join(10_000);
        }
    }
}
