package io.outbox4j.testservices;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.testcontainers.containers.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A PostgreSQL server for the tests, started once per JVM and stopped by a shutdown hook.
 *
 * <p>Resolution (docs/architecture.md §8): {@code OUTBOX4J_POSTGRES_URL} (with {@code
 * OUTBOX4J_POSTGRES_USER}, default {@code postgres}, and {@code OUTBOX4J_POSTGRES_PASSWORD},
 * default empty) → a Testcontainers {@code postgres:16-alpine} when a Docker engine answers → the
 * local installation ({@code initdb} and {@code pg_ctl} on the PATH or in {@code
 * /usr/lib/postgresql/<version>/bin}) started in a temporary directory on a free loopback port,
 * with durability switched off for speed → otherwise {@link ServerSupport#unavailable}. As root,
 * the local server runs as the {@code postgres} user.
 *
 * <pre>{@code
 * PostgresServer pg = PostgresServer.shared();
 * Jdbi jdbi = Jdbi.create(pg.createDatabase("my_test"), pg.user(), pg.password());
 * }</pre>
 */
public final class PostgresServer extends DatabaseServer {
    private static PostgresServer shared;

    private PostgresServer(String jdbcUrl, String user, String password, String origin) {
        super(jdbcUrl, user, password, origin);
    }

    private PostgresServer(String jdbcUrl, String origin, Control control) {
        super(jdbcUrl, "postgres", "", origin, control);
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

    @Override
    List<String> recreateDatabase(String name) {
        return List.of(
                "DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)",
                "CREATE DATABASE \"" + name + "\" TEMPLATE template0 ENCODING 'UTF8'");
    }

    @Override
    String product() {
        return "PostgreSQL";
    }

    private static PostgresServer start() {
        Optional<String> url = ServerSupport.env("OUTBOX4J_POSTGRES_URL");
        if (url.isPresent()) {
            return new PostgresServer(
                    url.get(),
                    ServerSupport.env("OUTBOX4J_POSTGRES_USER").orElse("postgres"),
                    ServerSupport.env("OUTBOX4J_POSTGRES_PASSWORD").orElse(""),
                    "OUTBOX4J_POSTGRES_URL");
        }
        if (ServerSupport.dockerAvailable()) {
            return container();
        }
        Optional<Path> bin = binDir();
        if (bin.isPresent()) {
            return local(bin.get());
        }
        throw ServerSupport.unavailable(
                "PostgreSQL",
                "apt-get install -y postgresql (initdb and pg_ctl are"
                        + " looked up on the PATH and in /usr/lib/postgresql/*/bin), start a Docker engine, or set"
                        + " OUTBOX4J_POSTGRES_URL, OUTBOX4J_POSTGRES_USER and OUTBOX4J_POSTGRES_PASSWORD");
    }

    private static PostgresServer container() {
        PostgreSQLContainer<?> c =
                new PostgreSQLContainer<>(DockerImageName.parse("postgres:16-alpine"))
                        .withCommand(
                                "postgres",
                                "-c",
                                "fsync=off",
                                "-c",
                                "synchronous_commit=off",
                                "-c",
                                "full_page_writes=off",
                                "-c",
                                "max_connections=300");
        c.start();
        Runtime.getRuntime().addShutdownHook(new Thread(c::stop, "outbox4j-postgres-stop"));
        return new PostgresServer(
                c.getJdbcUrl(), c.getUsername(), c.getPassword(), "Testcontainers");
    }

    /**
     * Finds the directory holding initdb and pg_ctl: the PATH first, then the newest Debian
     * installation.
     */
    private static Optional<Path> binDir() {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator, -1)) {
                Path initdb = Paths.get(dir, "initdb");
                if (!dir.isEmpty()
                        && Files.isExecutable(initdb)
                        && Files.isExecutable(Paths.get(dir, "pg_ctl"))) {
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
                    .filter(
                            b ->
                                    Files.isExecutable(b.resolve("initdb"))
                                            && Files.isExecutable(b.resolve("pg_ctl")))
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
        boolean root = isRoot();
        Path dir = serverDir("postgres");
        Path data = dir.resolve("data");
        Path log = dir.resolve("commands.log");
        int port = ServerSupport.freePort();
        if (root) {
            // initdb and postgres refuse to run as root: the postgres user owns the directory and
            // runs them.
            run(List.of("chown", "postgres:postgres", dir.toString()), log, Duration.ofSeconds(10));
        }
        run(
                asPostgres(
                        root,
                        bin.resolve("initdb").toString(),
                        "-D",
                        data.toString(),
                        "-A",
                        "trust",
                        "-U",
                        "postgres",
                        "-E",
                        "UTF8",
                        "--locale=C",
                        "--no-sync"),
                log,
                Duration.ofSeconds(60));
        String options =
                "-p "
                        + port
                        + " -k "
                        + dir
                        + " -c listen_addresses=127.0.0.1 -c fsync=off"
                        + " -c synchronous_commit=off -c full_page_writes=off -c max_connections=300";
        List<String> start =
                pgCtl(
                        root,
                        bin,
                        data,
                        "-o",
                        options,
                        "-l",
                        dir.resolve("postgres.log").toString(),
                        "-w",
                        "-t",
                        "60",
                        "start");
        run(start, log, Duration.ofSeconds(70));
        // immediate: no checkpoint, connections cut; a later start runs crash recovery
        List<String> stopNow = pgCtl(root, bin, data, "-m", "immediate", "-w", "stop");
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        run(stopNow, log, Duration.ofSeconds(30));
                                    } catch (RuntimeException ignored) {
                                        // the JVM is going away; nothing more to do
                                    }
                                    ServerSupport.deleteQuietly(dir);
                                },
                                "outbox4j-postgres-stop"));
        Control control =
                new Control() {
                    @Override
                    public void kill() {
                        run(stopNow, log, Duration.ofSeconds(30));
                    }

                    @Override
                    public void start() {
                        run(start, log, Duration.ofSeconds(70));
                    }
                };
        return new PostgresServer(
                "jdbc:postgresql://127.0.0.1:" + port + "/postgres",
                "local " + bin + ", data in " + dir,
                control);
    }

    /** A {@code pg_ctl} command of {@code bin} on the data directory {@code data}. */
    private static List<String> pgCtl(boolean root, Path bin, Path data, String... args) {
        List<String> command =
                new ArrayList<>(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString()));
        command.addAll(List.of(args));
        return asPostgres(root, command.toArray(new String[0]));
    }

    private static List<String> asPostgres(boolean root, String... command) {
        List<String> cmd = new ArrayList<>();
        if (root) {
            cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        cmd.addAll(List.of(command));
        return cmd;
    }
}
