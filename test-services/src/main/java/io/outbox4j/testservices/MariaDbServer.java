package io.outbox4j.testservices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.testcontainers.containers.MariaDBContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A MariaDB server for the tests, started once per JVM and stopped by a shutdown hook.
 *
 * <p>Resolution (docs/architecture.md §8): {@code OUTBOX4J_MARIADB_URL} (with {@code
 * OUTBOX4J_MARIADB_USER}, default {@code root}, and {@code OUTBOX4J_MARIADB_PASSWORD}, default
 * empty) → a Testcontainers {@code mariadb:10.11} when a Docker engine answers → the local
 * installation ({@code mariadb-install-db} and {@code mariadbd} from the {@code mariadb-server}
 * package) started in a temporary directory on a free loopback port, with durability relaxed for
 * speed → otherwise {@link ServerSupport#unavailable}.
 *
 * <pre>{@code
 * String url = MariaDbServer.shared().createDatabase("store_jdbi_tck");
 * Jdbi jdbi = Jdbi.create(url, MariaDbServer.shared().user(), MariaDbServer.shared().password());
 * }</pre>
 */
public final class MariaDbServer extends DatabaseServer {
    private static MariaDbServer shared;

    private MariaDbServer(String jdbcUrl, String user, String password, String origin) {
        super(jdbcUrl, user, password, origin);
    }

    /**
     * Returns the server of this JVM, starting it on first use.
     *
     * @return the shared server
     */
    public static synchronized MariaDbServer shared() {
        if (shared == null) {
            shared = start();
        }
        return shared;
    }

    @Override
    List<String> recreateDatabase(String name) {
        return List.of(
                "DROP DATABASE IF EXISTS `" + name + "`",
                "CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
    }

    @Override
    String product() {
        return "MariaDB";
    }

    private static MariaDbServer start() {
        Optional<String> url = ServerSupport.env("OUTBOX4J_MARIADB_URL");
        if (url.isPresent()) {
            return new MariaDbServer(
                    url.get(),
                    ServerSupport.env("OUTBOX4J_MARIADB_USER").orElse("root"),
                    ServerSupport.env("OUTBOX4J_MARIADB_PASSWORD").orElse(""),
                    "OUTBOX4J_MARIADB_URL");
        }
        if (ServerSupport.dockerAvailable()) {
            return container();
        }
        Optional<Path> server = executable("mariadbd", "/usr/sbin/mariadbd", "/usr/sbin/mysqld");
        Optional<Path> install =
                executable(
                        "mariadb-install-db",
                        "/usr/bin/mariadb-install-db",
                        "/usr/bin/mysql_install_db");
        if (server.isPresent() && install.isPresent()) {
            return local(server.get(), install.get());
        }
        throw ServerSupport.unavailable(
                "MariaDB",
                "apt-get install -y mariadb-server (mariadbd and"
                        + " mariadb-install-db are looked up on the PATH and in /usr/sbin, /usr/bin), start a Docker engine,"
                        + " or set OUTBOX4J_MARIADB_URL, OUTBOX4J_MARIADB_USER and OUTBOX4J_MARIADB_PASSWORD");
    }

    private static MariaDbServer container() {
        MariaDBContainer<?> c =
                new MariaDBContainer<>(DockerImageName.parse("mariadb:10.11"))
                        .withUsername("root")
                        .withPassword("test")
                        .withCommand(
                                "--innodb-flush-log-at-trx-commit=2",
                                "--skip-innodb-doublewrite",
                                "--max-connections=300",
                                "--character-set-server=utf8mb4",
                                "--collation-server=utf8mb4_bin");
        c.start();
        Runtime.getRuntime().addShutdownHook(new Thread(c::stop, "outbox4j-mariadb-stop"));
        return new MariaDbServer(c.getJdbcUrl(), "root", "test", "Testcontainers");
    }

    private static Optional<Path> executable(String name, String... fallbacks) {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator, -1)) {
                Path p = Paths.get(dir, name);
                if (!dir.isEmpty() && Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        for (String f : fallbacks) {
            if (Files.isExecutable(Paths.get(f))) {
                return Optional.of(Paths.get(f));
            }
        }
        return Optional.empty();
    }

    private MariaDbServer(String jdbcUrl, String origin, Control control) {
        super(jdbcUrl, "root", "", origin, control);
    }

    private static MariaDbServer local(Path server, Path install) {
        boolean root = isRoot();
        Path dir = serverDir("mariadb");
        Path data = dir.resolve("data");
        Path errorLog = dir.resolve("error.log");
        int port = ServerSupport.freePort();
        List<String> installDb =
                new ArrayList<>(
                        List.of(
                                install.toString(),
                                "--no-defaults",
                                "--datadir=" + data,
                                "--auth-root-authentication-method=normal",
                                "--skip-test-db"));
        List<String> serve =
                new ArrayList<>(
                        List.of(
                                server.toString(),
                                "--no-defaults",
                                "--datadir=" + data,
                                "--port=" + port,
                                "--bind-address=127.0.0.1",
                                "--socket=" + dir.resolve("mariadb.sock"),
                                "--pid-file=" + dir.resolve("mariadb.pid"),
                                "--log-error=" + errorLog,
                                "--innodb-flush-log-at-trx-commit=2",
                                "--skip-innodb-doublewrite",
                                "--innodb-buffer-pool-size=256M",
                                "--max-connections=300",
                                "--character-set-server=utf8mb4",
                                "--collation-server=utf8mb4_bin"));
        if (root) {
            installDb.add("--user=root");
            serve.add("--user=root");
        }
        run(installDb, dir.resolve("install-db.log"), Duration.ofSeconds(60));
        String url = "jdbc:mariadb://127.0.0.1:" + port + "/";
        LocalProcess process = new LocalProcess(serve, dir.resolve("mariadbd.out"));
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    process.stop();
                                    ServerSupport.deleteQuietly(dir);
                                },
                                "outbox4j-mariadb-stop"));
        process.start();
        awaitConnection(url, process.current(), errorLog, Duration.ofSeconds(60));
        Control control =
                new Control() {
                    @Override
                    public void kill() {
                        process.kill();
                    }

                    @Override
                    public void start() {
                        process.start();
                        awaitConnection(url, process.current(), errorLog, Duration.ofSeconds(60));
                    }
                };
        return new MariaDbServer(url, "local " + server + ", data in " + dir, control);
    }

    /** The mariadbd process of a local server; killed and started again by the fault tests. */
    private static final class LocalProcess {
        private final List<String> command;
        private final Path out;
        private Process process;

        LocalProcess(List<String> command, Path out) {
            this.command = command;
            this.out = out;
        }

        synchronized void start() {
            try {
                process =
                        new ProcessBuilder(command)
                                .redirectErrorStream(true)
                                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                                .start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start " + command.get(0), e);
            }
        }

        synchronized Process current() {
            return process;
        }

        /** SIGKILL, as a crash. */
        synchronized void kill() {
            try {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** SIGTERM (a clean shutdown), then SIGKILL after 20 s. */
        synchronized void stop() {
            if (process == null) {
                return;
            }
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void awaitConnection(
            String url, Process process, Path errorLog, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "mariadbd exited with code " + process.exitValue() + ": " + tail(errorLog));
            }
            try {
                DriverManager.getConnection(url + "?connectTimeout=1000", "root", "").close();
                return;
            } catch (SQLException e) {
                last = e;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for MariaDB", e);
            }
        }
        throw new IllegalStateException(
                "MariaDB did not accept connections at "
                        + url
                        + " within "
                        + timeout
                        + " ("
                        + (last == null ? "" : last.getMessage())
                        + "): "
                        + tail(errorLog));
    }
}
