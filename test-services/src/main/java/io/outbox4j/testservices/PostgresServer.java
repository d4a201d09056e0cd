package io.outbox4j.testservices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.testcontainers.containers.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A PostgreSQL server for the tests, started once per JVM and stopped by a shutdown hook.
 *
 * <p>Resolution (DESIGN §7): {@code OUTBOX4J_POSTGRES_URL} (with {@code OUTBOX4J_POSTGRES_USER}, default
 * {@code postgres}, and {@code OUTBOX4J_POSTGRES_PASSWORD}, default empty) → a Testcontainers
 * {@code postgres:16-alpine} when a Docker engine answers → the local installation ({@code initdb} and
 * {@code pg_ctl} on the PATH or in {@code /usr/lib/postgresql/<version>/bin}) started in a temporary
 * directory on a free loopback port, with durability switched off for speed → otherwise
 * {@link ServerSupport#unavailable}. As root, the local server runs as the {@code postgres} user.
 *
 * <pre>{@code
 * String url = PostgresServer.shared().createDatabase("store_jdbi_tck");
 * Jdbi jdbi = Jdbi.create(url, PostgresServer.shared().user(), PostgresServer.shared().password());
 * }</pre>
 */
public final class PostgresServer {
    private static final Pattern DATABASE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static PostgresServer shared;

    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String origin;

    private PostgresServer(String jdbcUrl, String user, String password, String origin) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.origin = origin;
    }

    /**
     * Returns the server of this JVM, starting it on first use.
     *
     * @return the shared server
     */
    public static synchronized PostgresServer shared() {
        if (shared == null) {
            shared = start();
        }
        return shared;
    }

    /**
     * Returns the JDBC URL of the server's maintenance database ({@code postgres}, or the database of
     * {@code OUTBOX4J_POSTGRES_URL}). Tests should work in a database of their own: {@link #createDatabase}.
     *
     * @return a JDBC URL
     */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /**
     * Returns the user name (a superuser for the local and container servers).
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
            throw new IllegalArgumentException("database name must match " + DATABASE_NAME + ", but was '" + name + "'");
        }
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
            st.execute("CREATE DATABASE \"" + name + "\" TEMPLATE template0 ENCODING 'UTF8'");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + " on " + this + ": " + e.getMessage(), e);
        }
        return withDatabase(jdbcUrl, name);
    }

    @Override
    public String toString() {
        return "PostgreSQL at " + jdbcUrl + " (" + origin + ")";
    }

    /** Replaces the database of a {@code jdbc:postgresql://host:port/db?params} URL. */
    static String withDatabase(String url, String database) {
        int hosts = url.indexOf("//");
        int slash = url.indexOf('/', hosts + 2);
        int query = url.indexOf('?', hosts + 2);
        String params = query < 0 ? "" : url.substring(query);
        String base = slash < 0 || (query >= 0 && slash > query) ? url.substring(0, query < 0 ? url.length() : query)
                : url.substring(0, slash);
        return base + "/" + database + params;
    }

    private static PostgresServer start() {
        Optional<String> url = ServerSupport.env("OUTBOX4J_POSTGRES_URL");
        if (url.isPresent()) {
            return new PostgresServer(url.get(), ServerSupport.env("OUTBOX4J_POSTGRES_USER").orElse("postgres"),
                    ServerSupport.env("OUTBOX4J_POSTGRES_PASSWORD").orElse(""), "OUTBOX4J_POSTGRES_URL");
        }
        if (ServerSupport.dockerAvailable()) {
            return container();
        }
        Optional<Path> bin = binDir();
        if (bin.isPresent()) {
            return local(bin.get());
        }
        throw ServerSupport.unavailable("PostgreSQL", "apt-get install -y postgresql (initdb and pg_ctl are"
                + " looked up on the PATH and in /usr/lib/postgresql/*/bin), start a Docker engine, or set"
                + " OUTBOX4J_POSTGRES_URL, OUTBOX4J_POSTGRES_USER and OUTBOX4J_POSTGRES_PASSWORD");
    }

    private static PostgresServer container() {
        PostgreSQLContainer<?> c = new PostgreSQLContainer<>(DockerImageName.parse("postgres:16-alpine"))
                .withCommand("postgres", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c",
                        "full_page_writes=off", "-c", "max_connections=300");
        c.start();
        Runtime.getRuntime().addShutdownHook(new Thread(c::stop, "outbox4j-postgres-stop"));
        return new PostgresServer(c.getJdbcUrl(), c.getUsername(), c.getPassword(), "Testcontainers");
    }

    /** Finds the directory holding initdb and pg_ctl: the PATH first, then the newest Debian installation. */
    private static Optional<Path> binDir() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                Path initdb = Paths.get(dir, "initdb");
                if (Files.isExecutable(initdb) && Files.isExecutable(Paths.get(dir, "pg_ctl"))) {
                    try {
                        return Optional.of(initdb.toRealPath().getParent());
                    } catch (IOException e) {
                        return Optional.of(Paths.get(dir));
                    }
                }
            }
        }
        Path debian = Paths.get("/usr/lib/postgresql");
        if (!Files.isDirectory(debian)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(debian)) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")) && Files.isExecutable(b.resolve("pg_ctl")))
                    .max(Comparator.comparingInt(PostgresServer::majorVersion));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int majorVersion(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static PostgresServer local(Path bin) {
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir;
        try {
            // Not ServerSupport.tempDir(): its delete hook could run while the server still uses the directory.
            dir = Files.createTempDirectory("outbox4j-postgres-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path data = dir.resolve("data");
        Path log = dir.resolve("postgres.log");
        int port = ServerSupport.freePort();
        if (root) {
            // initdb and postgres refuse to run as root: the postgres user owns the directory and runs them.
            run(List.of("chown", "postgres:postgres", dir.toString()), null, Duration.ofSeconds(10));
        }
        run(asPostgres(root, bin.resolve("initdb").toString(), "-D", data.toString(), "-A", "trust", "-U", "postgres",
                "-E", "UTF8", "--locale=C", "--no-sync"), dir.resolve("initdb.log"), Duration.ofSeconds(60));
        String options = "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off"
                + " -c synchronous_commit=off -c full_page_writes=off -c max_connections=300";
        run(asPostgres(root, bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-o", options, "-l",
                log.toString(), "-w", "-t", "60", "start"), dir.resolve("pg_ctl.log"), Duration.ofSeconds(70));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                run(asPostgres(root, bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "immediate",
                        "-w", "stop"), null, Duration.ofSeconds(30));
            } catch (RuntimeException ignored) {
                // the JVM is going away; nothing more to do
            }
            ServerSupport.deleteQuietly(dir);
        }, "outbox4j-postgres-stop"));
        return new PostgresServer("jdbc:postgresql://127.0.0.1:" + port + "/postgres", "postgres", "",
                "local " + bin + ", data in " + dir);
    }

    private static List<String> asPostgres(boolean root, String... command) {
        List<String> cmd = new ArrayList<>();
        if (root) {
            cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        cmd.addAll(List.of(command));
        return cmd;
    }

    /** Runs a command to its end; fails with the tail of its output when it fails. */
    static void run(List<String> command, Path log, Duration timeout) {
        try {
            Path out = log != null ? log : Files.createTempFile("outbox4j-cmd-", ".log");
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile())).start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout
                        + ": " + tail(out));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed with exit code " + p.exitValue()
                        + ": " + tail(out));
            }
            if (log == null) {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        }
    }

    static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }
}
