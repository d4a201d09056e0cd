package io.outbox4j.store.jdbi;

import io.outbox4j.testservices.MariaDbServer;
import io.outbox4j.testservices.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.Query;

/**
 * The databases of the tests: one H2 in-memory database per name, and one fresh database per JVM on
 * the shared PostgreSQL and MariaDB servers. Every {@code Jdbi} gets its own small connection pool,
 * so two of them act like two application instances.
 */
final class Databases {
    private static String postgresUrl;
    private static String mariaDbUrl;

    private Databases() {}

    static Jdbi h2(String name) {
        return Jdbi.create(new Pool("jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", "sa", ""));
    }

    static Jdbi postgres() {
        PostgresServer server = PostgresServer.shared();
        return Jdbi.create(new Pool(postgresUrl(), server.user(), server.password()));
    }

    static synchronized String postgresUrl() {
        if (postgresUrl == null) {
            postgresUrl = PostgresServer.shared().createDatabase("store_jdbi_test");
        }
        return postgresUrl;
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

    static Jdbi mariaDb() {
        MariaDbServer server = MariaDbServer.shared();
        return Jdbi.create(new Pool(mariaDbUrl(), server.user(), server.password()));
    }

    static synchronized String mariaDbUrl() {
        if (mariaDbUrl == null) {
            mariaDbUrl = MariaDbServer.shared().createDatabase("store_jdbi_test");
        }
        return mariaDbUrl;
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
