package io.outbox4j.testservices;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Apache Kafka broker for tests and for the quickstart.
 *
 * <p>{@link #shared()} resolves one broker per JVM, in this order (docs/architecture.md §8):
 *
 * <ol>
 *   <li>{@code OUTBOX4J_KAFKA_BOOTSTRAP} — an external broker's bootstrap servers ({@code
 *       host:port,...});
 *   <li>Testcontainers with the {@code apache/kafka} image when a Docker engine answers (disable
 *       with {@code OUTBOX4J_TESTCONTAINERS=false});
 *   <li>otherwise a single-node KRaft broker (combined broker + controller) <em>inside this
 *       JVM</em>, from Apache Kafka's own jars ({@code org.apache.kafka:kafka_2.13}, same version
 *       as the client), listening on free 127.0.0.1 ports with its data in a temporary directory.
 *       It needs nothing installed and is up in a few seconds.
 * </ol>
 *
 * The shared broker is stopped (and its data deleted) by a JVM shutdown hook.
 *
 * <p>{@link #startEmbedded()} always starts a new, private in-JVM broker owned by the caller: it
 * can be {@link #stop() stopped} and {@link #start() started} again on the same address with its
 * data kept, which is what a "broker down mid-run" test needs. {@link #close() Close} it when done.
 *
 * <pre>{@code
 * KafkaServer kafka = KafkaServer.shared();
 * kafka.createTopic("orders", 3, Map.of());            // or Map.of("max.message.bytes", "65536")
 * KafkaPublisher publisher = KafkaPublisher.builder().bootstrapServers(kafka.bootstrapServers()).build();
 * }</pre>
 *
 * <p>The in-JVM and container brokers accept plaintext connections without authentication and
 * auto-create a topic (one partition) on first use; {@link #createTopic(String, int, Map)} creates
 * one with chosen partitions and configs and returns once every partition accepts writes. The
 * in-JVM broker logs through slf4j; keep it at {@code warn}. A fatal broker error throws in the
 * broker's thread instead of halting the JVM.
 */
public final class KafkaServer implements AutoCloseable {
    /** Environment variable naming an external broker's bootstrap servers. */
    public static final String BOOTSTRAP_ENV = "OUTBOX4J_KAFKA_BOOTSTRAP";

    /** The Docker image Testcontainers runs when Docker answers. */
    public static final String IMAGE = "apache/kafka:4.1.1";

    private static final Logger LOG = LoggerFactory.getLogger(KafkaServer.class);
    private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);
    private static KafkaServer shared;

    private final String bootstrapServers;
    private final String description;
    private final boolean ownedByCaller;
    private final Embedded embedded;
    private final Runnable stopContainer;
    private Admin admin;

    private KafkaServer(
            String bootstrapServers,
            String description,
            boolean ownedByCaller,
            Embedded embedded,
            Runnable stopContainer) {
        this.bootstrapServers = bootstrapServers;
        this.description = description;
        this.ownedByCaller = ownedByCaller;
        this.embedded = embedded;
        this.stopContainer = stopContainer;
    }

    /**
     * Returns the broker shared by every test of this JVM, starting it on first use.
     *
     * @return the shared broker; never stopped before the JVM exits
     */
    public static synchronized KafkaServer shared() {
        if (shared == null) {
            shared = resolve();
            KafkaServer s = shared;
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(s::shutdown, "outbox4j-kafka-shutdown"));
        }
        return shared;
    }

    private static KafkaServer resolve() {
        var external = ServerSupport.env(BOOTSTRAP_ENV);
        if (external.isPresent()) {
            return new KafkaServer(
                    external.get(),
                    "external Kafka at " + external.get() + " (" + BOOTSTRAP_ENV + ")",
                    false,
                    null,
                    null);
        }
        if (ServerSupport.dockerAvailable()) {
            return Container.start();
        }
        try {
            Embedded e = Embedded.create();
            e.start();
            return new KafkaServer(e.bootstrapServers(), e.describe(), false, e, null);
        } catch (RuntimeException | LinkageError e) {
            LOG.error("could not start an in-JVM Kafka broker", e);
            throw ServerSupport.unavailable(
                    "Kafka",
                    "the in-JVM KRaft broker failed to start ("
                            + e
                            + "); set "
                            + BOOTSTRAP_ENV
                            + "=host:port or start a Docker engine");
        }
    }

    /**
     * Starts a new single-node KRaft broker in this JVM, private to the caller, whatever the
     * environment says. It is stopped and deleted by {@link #close()}, or at the latest when the
     * JVM exits.
     *
     * @return the running broker; the caller closes it
     */
    public static KafkaServer startEmbedded() {
        Embedded e = Embedded.create();
        e.start();
        KafkaServer s = new KafkaServer(e.bootstrapServers(), e.describe(), true, e, null);
        Runtime.getRuntime().addShutdownHook(new Thread(s::shutdown, "outbox4j-kafka-shutdown"));
        return s;
    }

    /**
     * Returns the bootstrap servers to give a Kafka client.
     *
     * @return {@code host:port[,host:port...]}
     */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /**
     * Returns the client properties needed to reach this broker (the bootstrap servers), to add a
     * client's own.
     *
     * @return a new mutable map
     */
    public Map<String, Object> clientProperties() {
        return new java.util.HashMap<>(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers));
    }

    /**
     * Creates a topic and waits until every partition has a leader. A topic that already exists is
     * left as it is.
     *
     * @param name the topic name
     * @param partitions how many partitions, at least 1
     * @param configs topic configs such as {@code max.message.bytes}; may be empty
     */
    public void createTopic(String name, int partitions, Map<String, String> configs) {
        if (partitions < 1) {
            throw new IllegalArgumentException("partitions must be >= 1, but was " + partitions);
        }
        Admin a = admin();
        try {
            try {
                a.createTopics(
                                List.of(
                                        new NewTopic(name, partitions, (short) 1)
                                                .configs(Map.copyOf(configs))))
                        .all()
                        .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new IllegalStateException(
                            "could not create topic '" + name + "' on " + description,
                            e.getCause());
                }
            }
            awaitLeaders(a, name);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topic '" + name + "'", e);
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "creating topic '"
                            + name
                            + "' on "
                            + description
                            + " took over "
                            + ADMIN_TIMEOUT,
                    e);
        }
    }

    private static void awaitLeaders(Admin a, String name)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + ADMIN_TIMEOUT.toNanos();
        while (true) {
            try {
                TopicDescription d =
                        a.describeTopics(List.of(name))
                                .allTopicNames()
                                .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                                .get(name);
                if (d != null
                        && d.partitions().stream()
                                .allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                    // The leader in the metadata can run ahead of the partition being ready on the
                    // broker; a
                    // producer that writes then gets NOT_LEADER_OR_FOLLOWER for some batches and
                    // not for others,
                    // which the idempotent producer reports as out-of-order sequences. Listing
                    // offsets is answered
                    // by the partition leader itself, so it succeeds only once every partition
                    // accepts writes.
                    Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
                    d.partitions()
                            .forEach(
                                    p ->
                                            latest.put(
                                                    new TopicPartition(name, p.partition()),
                                                    OffsetSpec.latest()));
                    a.listOffsets(latest)
                            .all()
                            .get(ADMIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                    return;
                }
            } catch (ExecutionException e) {
                // not visible yet; retry below
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("topic '" + name + "' has no leader yet");
            }
            Thread.sleep(20);
        }
    }

    /**
     * Returns an admin client for this broker, created on first use and closed with the broker.
     *
     * @return the admin client; do not close it
     */
    public synchronized Admin admin() {
        if (admin == null) {
            Map<String, Object> props = clientProperties();
            props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
            props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
            admin = Admin.create(props);
        }
        return admin;
    }

    /**
     * Tells whether this broker can be {@link #stop() stopped} and {@link #start() started} again.
     *
     * @return {@code true} for a broker from {@link #startEmbedded()}
     */
    public boolean restartable() {
        return ownedByCaller;
    }

    /**
     * Stops the broker, keeping its data and address, so clients see it go down. Only for a broker
     * from {@link #startEmbedded()}.
     *
     * @throws IllegalStateException for the shared broker
     */
    public void stop() {
        requireOwned("stop");
        closeAdmin();
        embedded.stop();
    }

    /**
     * Starts a {@link #stop() stopped} broker again on the same address with the same data; nothing
     * happens when it is running. Only for a broker from {@link #startEmbedded()}.
     *
     * @throws IllegalStateException for the shared broker
     */
    public void start() {
        requireOwned("start");
        embedded.start();
    }

    /**
     * Tells whether the broker is running (an external or container broker is always reported as
     * running).
     *
     * @return {@code false} only for an embedded broker that is stopped
     */
    public boolean isRunning() {
        return embedded == null || embedded.isRunning();
    }

    private void requireOwned(String what) {
        if (!ownedByCaller) {
            throw new IllegalStateException(
                    "cannot "
                            + what
                            + " the shared Kafka broker ("
                            + description
                            + "); use KafkaServer.startEmbedded() for a broker of your own");
        }
    }

    /**
     * Stops and deletes a broker from {@link #startEmbedded()}; does nothing for the shared broker.
     */
    @Override
    public void close() {
        if (ownedByCaller) {
            shutdown();
        }
    }

    private void shutdown() {
        closeAdmin();
        if (embedded != null) {
            embedded.destroy();
        }
        if (stopContainer != null) {
            stopContainer.run();
        }
    }

    private synchronized void closeAdmin() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(2));
            admin = null;
        }
    }

    /** Describes the broker and how it was resolved. */
    @Override
    public String toString() {
        return description;
    }

    /** Testcontainers: kept in its own class so the in-JVM path never loads container classes. */
    private static final class Container {
        static KafkaServer start() {
            var c = new org.testcontainers.kafka.KafkaContainer(IMAGE);
            c.start();
            return new KafkaServer(
                    c.getBootstrapServers(),
                    "Testcontainers " + IMAGE + " at " + c.getBootstrapServers(),
                    false,
                    null,
                    c::stop);
        }
    }

    /** A combined broker + controller KRaft node in this JVM. */
    private static final class Embedded {
        private final Path dir;
        private final Properties config;
        private final int brokerPort;
        private kafka.server.KafkaRaftServer server;

        private Embedded(Path dir, Properties config, int brokerPort) {
            this.dir = dir;
            this.config = config;
            this.brokerPort = brokerPort;
        }

        static Embedded create() {
            installExitGuard();
            // not ServerSupport.tempDir: its exit hook would delete the log while the broker's own
            // hook flushes it
            Path dir;
            try {
                dir = Files.createTempDirectory("outbox4j-kafka-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            int brokerPort = ServerSupport.freePort();
            int controllerPort = ServerSupport.freePort();
            Properties p = new Properties();
            p.put("process.roles", "broker,controller");
            p.put("node.id", "1");
            p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
            p.put(
                    "listeners",
                    "PLAINTEXT://127.0.0.1:"
                            + brokerPort
                            + ",CONTROLLER://127.0.0.1:"
                            + controllerPort);
            p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
            p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
            p.put("controller.listener.names", "CONTROLLER");
            p.put("inter.broker.listener.name", "PLAINTEXT");
            p.put("log.dirs", dir.resolve("data").toString());
            p.put("num.partitions", "1");
            p.put("default.replication.factor", "1");
            p.put("min.insync.replicas", "1");
            p.put("offsets.topic.replication.factor", "1");
            p.put("offsets.topic.num.partitions", "1");
            p.put("transaction.state.log.replication.factor", "1");
            p.put("transaction.state.log.min.isr", "1");
            p.put("transaction.state.log.num.partitions", "1");
            p.put("share.coordinator.state.topic.replication.factor", "1");
            p.put("share.coordinator.state.topic.min.isr", "1");
            p.put("group.initial.rebalance.delay.ms", "0");
            p.put("auto.create.topics.enable", "true");
            format(dir, p);
            return new Embedded(dir, p, brokerPort);
        }

        /**
         * Runs {@code kafka-storage format} in-process (static voters, so no {@code --standalone}).
         */
        private static void format(Path dir, Properties p) {
            Path file = dir.resolve("server.properties");
            try (OutputStream out = Files.newOutputStream(file)) {
                p.store(out, "outbox4j embedded KRaft broker");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            ByteArrayOutputStream output = new ByteArrayOutputStream();
            int rc;
            try (PrintStream ps = new PrintStream(output, true, StandardCharsets.UTF_8)) {
                rc =
                        kafka.tools.StorageTool.execute(
                                new String[] {
                                    "format",
                                    "-t",
                                    Uuid.randomUuid().toString(),
                                    "-c",
                                    file.toString()
                                },
                                ps);
            }
            if (rc != 0) {
                throw new IllegalStateException(
                        "formatting the Kafka log directory failed (rc="
                                + rc
                                + "): "
                                + output.toString(StandardCharsets.UTF_8));
            }
        }

        /**
         * A fatal broker error makes Kafka halt the JVM; in a test JVM that would kill the run
         * without a report, so an embedded broker turns exit and halt into an exception in the
         * failing broker thread instead.
         */
        private static synchronized void installExitGuard() {
            Exit.Procedure guard =
                    (status, message) -> {
                        LOG.error(
                                "embedded Kafka broker asked to exit the JVM (status {}): {}",
                                status,
                                message);
                        throw new IllegalStateException(
                                "embedded Kafka broker asked to exit the JVM (status "
                                        + status
                                        + "): "
                                        + message);
                    };
            Exit.setExitProcedure(guard);
            Exit.setHaltProcedure(guard);
        }

        String bootstrapServers() {
            return "127.0.0.1:" + brokerPort;
        }

        String describe() {
            return "in-JVM Kafka "
                    + org.apache.kafka.common.utils.AppInfoParser.getVersion()
                    + " KRaft broker at "
                    + bootstrapServers()
                    + " (data in "
                    + dir
                    + ")";
        }

        synchronized boolean isRunning() {
            return server != null;
        }

        synchronized void start() {
            if (server != null) {
                return;
            }
            long t0 = System.nanoTime();
            kafka.server.KafkaRaftServer s =
                    new kafka.server.KafkaRaftServer(
                            kafka.server.KafkaConfig.fromProps(config, false), Time.SYSTEM);
            try {
                s.startup();
            } catch (RuntimeException e) {
                s.shutdown();
                s.awaitShutdown();
                throw e;
            }
            server = s;
            LOG.info("started {} in {} ms", describe(), (System.nanoTime() - t0) / 1_000_000);
        }

        synchronized void stop() {
            if (server == null) {
                return;
            }
            kafka.server.KafkaRaftServer s = server;
            server = null;
            s.shutdown();
            s.awaitShutdown();
        }

        void destroy() {
            try {
                stop();
            } finally {
                ServerSupport.deleteQuietly(dir);
            }
        }
    }
}
