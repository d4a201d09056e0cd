package io.outbox4j.kafka.connect;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Connections to the outbox database. The driver is looked up in the plugin's own class loader
 * first: a Connect worker loads each plugin in an isolated class loader, where {@link
 * DriverManager} does not see the drivers shipped beside the connector.
 */
final class Database {
    private final String url;
    private final String user;
    private final String password;

    Database(String url, String user, String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    /** Opens one unpooled connection (for validation). */
    Connection connect() throws SQLException {
        Properties props = new Properties();
        if (!user.isEmpty()) {
            props.setProperty("user", user);
        }
        if (!password.isEmpty()) {
            props.setProperty("password", password);
        }
        Connection c = driver().connect(url, props);
        if (c == null) {
            throw new SQLException("the JDBC driver does not accept " + Redact.url(url));
        }
        return c;
    }

    /**
     * A small pool: a task uses one connection to claim, one to complete and renew, and on
     * PostgreSQL one to listen for commits (held while the task runs; docs/relay.md).
     */
    HikariDataSource pool(String name) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(name);
        config.setDataSource(new DriverDataSource(this));
        config.setMaximumPoolSize(3);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(10_000);
        // Start even while the database is down: the task retries, it does not fail.
        config.setInitializationFailTimeout(-1);
        return new HikariDataSource(config);
    }

    private Driver driver() throws SQLException {
        Driver found = find(Database.class.getClassLoader());
        if (found == null) {
            found = find(Thread.currentThread().getContextClassLoader());
        }
        if (found != null) {
            return found;
        }
        try {
            return DriverManager.getDriver(url);
        } catch (SQLException e) {
            throw new SQLException(
                    "no JDBC driver accepts "
                            + Redact.url(url)
                            + "; the plugin ships PostgreSQL and MariaDB/MySQL drivers, put any"
                            + " other driver's jar into the plugin's directory",
                    e);
        }
    }

    private @Nullable Driver find(@Nullable ClassLoader loader) throws SQLException {
        if (loader == null) {
            return null;
        }
        for (Driver d : ServiceLoader.load(Driver.class, loader)) {
            if (d.acceptsURL(url)) {
                return d;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return Redact.url(url);
    }

    /** Hands the pool connections from the driver found above. */
    private static final class DriverDataSource implements DataSource {
        private final Database database;
        private int loginTimeout;

        DriverDataSource(Database database) {
            this.database = database;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return database.connect();
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return new Database(database.url, username, password).connect();
        }

        @Override
        public @Nullable PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {
            loginTimeout = seconds;
        }

        @Override
        public int getLoginTimeout() {
            return loginTimeout;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException("no parent logger");
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            if (iface.isInstance(this)) {
                return iface.cast(this);
            }
            throw new SQLException("not a wrapper for " + iface.getName());
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return iface.isInstance(this);
        }
    }
}
