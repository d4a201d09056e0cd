package io.outbox4j.testservices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * What the SQL server fixtures ({@link PostgresServer}, {@link MariaDbServer}) share: the address,
 * fresh databases per test class, and running the local server's commands.
 */
public abstract class DatabaseServer {
    private static final Pattern DATABASE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String origin;
    private final Control control;
    private boolean running = true;

    /** How a locally started server is killed and started again (null: not ours to restart). */
    interface Control {
        void kill();

        void start();
    }

    DatabaseServer(String jdbcUrl, String user, String password, String origin) {
        this(jdbcUrl, user, password, origin, null);
    }

    DatabaseServer(String jdbcUrl, String user, String password, String origin, Control control) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.origin = origin;
        this.control = control;
    }

    /**
     * Tells whether the fault tests can kill and start this server: only a server the fixture
     * started itself from the local installation (not a container, not a server given by URL).
     *
     * @return whether {@link #kill()} and {@link #startAgain()} work
     */
    public boolean restartable() {
        return control != null;
    }

    /**
     * Kills the server as a crash would (PostgreSQL: an immediate shutdown, no checkpoint; MariaDB:
     * {@code SIGKILL} of mariadbd): every connection breaks, and the next {@link #startAgain()}
     * runs the database's crash recovery on the same data directory and port. Does nothing if it is
     * not running.
     *
     * @throws IllegalStateException if the server is not {@link #restartable()}
     */
    public synchronized void kill() {
        if (running) {
            requireControl().kill();
            running = false;
        }
    }

    /**
     * Starts a killed server again on the same port and data, and waits until it accepts
     * connections. Does nothing if it is running.
     *
     * @throws IllegalStateException if the server is not {@link #restartable()}
     */
    public synchronized void startAgain() {
        if (!running) {
            requireControl().start();
            running = true;
        }
    }

    private Control requireControl() {
        if (control == null) {
            throw new IllegalStateException(
                    product()
                            + " at "
                            + jdbcUrl
                            + " was not started by the test fixture ("
                            + origin
                            + "), so it cannot be killed and restarted; unset the URL variable to"
                            + " let the tests start a local one");
        }
        return control;
    }

    /** The statements that drop a database of this name if it exists and create it empty. */
    abstract List<String> recreateDatabase(String name);

    abstract String product();

    /**
     * Returns the JDBC URL of the server's default database. Tests should work in a database of
     * their own: {@link #createDatabase}.
     *
     * @return a JDBC URL
     */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /**
     * Returns the user name (an administrator for the local and container servers).
     *
     * @return the user
     */
    public String user() {
        return user;
    }

    /**
     * Returns the password.
     *
     * @return the password, possibly empty
     */
    public String password() {
        return password;
    }

    /**
     * Creates a fresh, empty database, dropping one of the same name first.
     *
     * @param name the database name: lower-case letters, digits and underscores
     * @return the JDBC URL of the new database (same user and password)
     */
    public String createDatabase(String name) {
        if (name == null || !DATABASE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "database name must match " + DATABASE_NAME + ", but was '" + name + "'");
        }
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                Statement st = c.createStatement()) {
            for (String sql : recreateDatabase(name)) {
                st.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "cannot create database " + name + " on " + this + ": " + e.getMessage(), e);
        }
        return withDatabase(jdbcUrl, name);
    }

    @Override
    public String toString() {
        return product() + " at " + jdbcUrl + " (" + origin + ")";
    }

    /** Replaces the database of a {@code jdbc:<driver>://host:port/db?params} URL. */
    static String withDatabase(String url, String database) {
        int hosts = url.indexOf("//");
        int query = url.indexOf('?', hosts + 2);
        int end = query < 0 ? url.length() : query;
        int slash = url.indexOf('/', hosts + 2);
        String base = slash < 0 || slash > end ? url.substring(0, end) : url.substring(0, slash);
        return base + "/" + database + url.substring(end);
    }

    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /**
     * Creates the directory of a local server. Not {@link ServerSupport#tempDir}: its delete hook
     * could run while the server still uses the directory; the fixture deletes it after stopping
     * the server.
     */
    static Path serverDir(String prefix) {
        try {
            return Files.createTempDirectory("outbox4j-" + prefix + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Runs a command to its end, its output appended to {@code log}; fails with the tail of it when
     * it fails.
     */
    static void run(List<String> command, Path log, Duration timeout) {
        try {
            Process p =
                    new ProcessBuilder(command)
                            .redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                            .start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command)
                                + " did not finish within "
                                + timeout
                                + ": "
                                + tail(log));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        String.join(" ", command)
                                + " failed with exit code "
                                + p.exitValue()
                                + ": "
                                + tail(log));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(
                    "interrupted while running " + String.join(" ", command), e);
        }
    }

    /** The last lines of a log, for an error message. */
    static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }
}
