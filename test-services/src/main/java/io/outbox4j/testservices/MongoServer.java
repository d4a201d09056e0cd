package io.outbox4j.testservices;

import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.util.List;
import java.util.Optional;
import org.testcontainers.containers.MongoDBContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A MongoDB server for the tests, started once per JVM and stopped by a shutdown hook.
 *
 * <p>Resolution order (docs/architecture.md §8):
 *
 * <ol>
 *   <li>{@code OUTBOX4J_MONGODB_URI}: an existing server (a replica set for the transaction rules).
 *       Whether it runs transactions is read from {@code OUTBOX4J_MONGODB_TRANSACTIONS} ({@code
 *       true}/{@code false}); when unset, a URI naming a {@code replicaSet} or using {@code
 *       mongodb+srv} is taken to support them.
 *   <li>Testcontainers {@code mongo:7.0} when a Docker engine answers: a single-node replica set,
 *       so multi-document transactions work.
 *   <li>The in-JVM, wire-compatible {@code de.bwaldvogel:mongo-java-server} (memory backend) on a
 *       free loopback port. It reports MongoDB 6.0 so the 5.x driver connects; it has no sessions
 *       and no transactions.
 * </ol>
 */
public final class MongoServer {
    /** The environment variable naming an existing server. */
    public static final String URI_ENV = "OUTBOX4J_MONGODB_URI";

    /**
     * The environment variable telling whether the server of {@link #URI_ENV} runs transactions.
     */
    public static final String TRANSACTIONS_ENV = "OUTBOX4J_MONGODB_TRANSACTIONS";

    /** Why the in-JVM server cannot run the transaction rules. */
    public static final String NO_TRANSACTIONS_IN_JVM =
            "mongo-java-server has no sessions or multi-document transactions";

    private static MongoServer shared;

    private final String connectionString;
    private final String description;
    private final String transactionsUnsupported;

    private MongoServer(
            String connectionString, String description, String transactionsUnsupported) {
        this.connectionString = connectionString;
        this.description = description;
        this.transactionsUnsupported = transactionsUnsupported;
    }

    /**
     * Returns the server of this JVM, starting it on first use.
     *
     * @return the shared server
     */
    public static synchronized MongoServer shared() {
        if (shared == null) {
            shared = start();
        }
        return shared;
    }

    private static MongoServer start() {
        Optional<String> uri = ServerSupport.env(URI_ENV);
        if (uri.isPresent()) {
            return fromEnvironment(uri.get());
        }
        if (ServerSupport.dockerAvailable()) {
            return fromTestcontainers();
        }
        try {
            return inJvm();
        } catch (RuntimeException | LinkageError e) {
            throw ServerSupport.unavailable(
                    "MongoDB",
                    "the in-JVM mongo-java-server did not start ("
                            + e
                            + "); set "
                            + URI_ENV
                            + " to a MongoDB replica set, e.g. mongodb://127.0.0.1:27017/?replicaSet=rs0");
        }
    }

    private static MongoServer fromEnvironment(String uri) {
        Optional<String> flag = ServerSupport.env(TRANSACTIONS_ENV);
        boolean transactions =
                flag.map(Boolean::parseBoolean)
                        .orElse(uri.startsWith("mongodb+srv://") || uri.contains("replicaSet="));
        String reason =
                transactions
                        ? null
                        : "the server of "
                                + URI_ENV
                                + " is not known to run multi-document "
                                + "transactions (name a replicaSet in the URI or set "
                                + TRANSACTIONS_ENV
                                + "=true)";
        return new MongoServer(uri, "MongoDB at " + URI_ENV, reason);
    }

    private static MongoServer fromTestcontainers() {
        MongoDBContainer container = new MongoDBContainer(DockerImageName.parse("mongo:7.0"));
        container.start();
        Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "mongodb-container-stop"));
        // A direct connection to the single replica-set member: it is the primary, so sessions and
        // transactions work without the driver having to resolve the container's internal host
        // name.
        return new MongoServer(
                container.getConnectionString() + "/?directConnection=true",
                "MongoDB 7.0 replica set (Testcontainers)",
                null);
    }

    private static MongoServer inJvm() {
        de.bwaldvogel.mongo.MongoServer server =
                new de.bwaldvogel.mongo.MongoServer(new MemoryBackend().version(new Version6()));
        int port = ServerSupport.freePort();
        server.bind("127.0.0.1", port);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(server::shutdownNow, "mongo-java-server-stop"));
        return new MongoServer(
                "mongodb://127.0.0.1:" + port,
                "mongo-java-server (in-JVM, memory backend, reporting MongoDB 6.0)",
                NO_TRANSACTIONS_IN_JVM);
    }

    /**
     * Returns the connection string, without a database name.
     *
     * @return a {@code mongodb://} connection string
     */
    public String connectionString() {
        return connectionString;
    }

    /**
     * Tells whether the server runs multi-document transactions (a replica set or a sharded
     * cluster).
     *
     * @return {@code true} when sessions and transactions are available
     */
    public boolean supportsTransactions() {
        return transactionsUnsupported == null;
    }

    /**
     * Returns why transactions cannot be tested against this server.
     *
     * @return the reason, or empty when {@link #supportsTransactions()} is {@code true}
     */
    public Optional<String> transactionsUnsupportedReason() {
        return Optional.ofNullable(transactionsUnsupported);
    }

    /**
     * Describes which server this is, for test reports.
     *
     * @return a short description
     */
    public String description() {
        return description;
    }

    @Override
    public String toString() {
        return "MongoServer[" + description + "]";
    }

    /**
     * MongoDB 6.0 (wire version 17): the oldest the 5.x driver accepts, and what mongo-java-server
     * can serve.
     */
    private static final class Version6 implements MongoVersion {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(6, 0, 0);
        }

        @Override
        public int getWireVersion() {
            return 17;
        }
    }
}
