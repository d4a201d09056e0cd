package io.outbox4j.store.jdbi;

import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.MariaDbServer;
import io.outbox4j.testservices.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.Query;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The databases of the tests: one H2 in-memory database per name, and one fresh database per JVM on
 * the shared PostgreSQL and MariaDB servers. Every {@code Jdbi} gets its own small connection pool,
 * so two of them act like two application instances.
 */
final class Databases {
    /** The test database of each server, created on first use. */
    private static final Map<DatabaseServer, String> URLS = new ConcurrentHashMap<>();

    private Databases() {}

    static Jdbi h2(String name) {
        return Jdbi.create(new Pool("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", "sa", ""));
    }

    static Jdbi postgres() {
        return jdbiOn(PostgresServer.shared());
    }

    static String postgresUrl() {
        return url(PostgresServer.shared());
    }

    /**
     * Runs {@code EXPLAIN (<options>) <statement>} on PostgreSQL in a transaction it rolls back (so
     * {@code ANALYZE} changes nothing) and returns the plan's lines.
     */
    static String explainPostgres(
            Jdbi jdbi, String options, String statement, UnaryOperator<Query> bind) {
        return jdbi.withHandle(
                h -> {
                    h.begin();
                    try {
                        return String.join(
                                "\n",
                                bind.apply(h.createQuery("EXPLAIN (" + options + ") " + statement))
                                        .mapTo(String.class)
                                        .list());
                    } finally {
                        h.rollback();
                    }
                });
    }

    /**
     * The columns a bulk load of the plan tests fills, in the order of its {@code SELECT}: {@code
     * (id, …, parked, attempts, dead_at, dead_reason)}.
     */
    static final String LOADED_COLUMNS =
            " (id, topic, msg_key, module, content_type, payload, headers, occurred_at,"
                    + " enqueued_at, available_at, parked, attempts, dead_at, dead_reason)";

    /** Builds a store over {@code table} through {@code jdbi} and creates the table if absent. */
    static JdbiOutboxStore createdStore(Jdbi jdbi, String table) {
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName(table).build();
        store.createSchemaIfAbsent();
        return store;
    }

    /**
     * The three databases as the arguments of a parameterised test: a name and a source of {@code
     * Jdbi}s over it (on H2, the in-memory database {@code h2Name}).
     */
    static Stream<Arguments> eachDatabase(String h2Name) {
        return Stream.of(
                Arguments.of("PostgreSQL", (Supplier<Jdbi>) Databases::postgres),
                Arguments.of("MariaDB", (Supplier<Jdbi>) Databases::mariaDb),
                Arguments.of("H2", (Supplier<Jdbi>) () -> h2(h2Name)));
    }

    /** SQL run on a plain JDBC statement. */
    @FunctionalInterface
    interface StatementWork {
        void run(Statement st) throws SQLException;
    }

    /**
     * Runs {@code work} on a plain JDBC statement of one connection of {@code jdbi}: for bulk loads
     * and DDL, which need no binding.
     */
    static void onStatement(Jdbi jdbi, StatementWork work) throws SQLException {
        try (Handle h = jdbi.open();
                Statement st = h.getConnection().createStatement()) {
            work.run(st);
        }
    }

    static Jdbi mariaDb() {
        return jdbiOn(MariaDbServer.shared());
    }

    static String mariaDbUrl() {
        return url(MariaDbServer.shared());
    }

    /** A new {@code Jdbi}, with a pool of its own, over the test database of {@code server}. */
    private static Jdbi jdbiOn(DatabaseServer server) {
        return Jdbi.create(new Pool(url(server), server.user(), server.password()));
    }

    /** The JDBC URL of the test database of {@code server}: a fresh one per JVM. */
    private static String url(DatabaseServer server) {
        return URLS.computeIfAbsent(server, s -> s.createDatabase("store_jdbi_test"));
    }

    /**
     * A minimal connection pool: enough to keep the tests from opening a connection per statement.
     */
    static final class Pool implements ConnectionFactory {
        private final String url;
        private final String user;
        private final String password;
        private final BlockingQueue<Connection> idle = new LinkedBlockingQueue<>();

        Pool(String url, String user, String password) {
            this.url = url;
            this.user = user;
            this.password = password;
        }

        @Override
        public Connection openConnection() throws SQLException {
            Connection c = idle.poll();
            return c != null ? c : DriverManager.getConnection(url, user, password);
        }

        @Override
        public void closeConnection(Connection c) throws SQLException {
            if (c.isClosed()) {
                return;
            }
            if (!c.getAutoCommit()) {
                c.rollback();
                c.setAutoCommit(true);
            }
            if (idle.size() < 8) {
                idle.offer(c);
            } else {
                c.close();
            }
        }
    }
}
