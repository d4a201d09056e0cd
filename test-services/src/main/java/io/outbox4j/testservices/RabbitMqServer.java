package io.outbox4j.testservices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.opentest4j.TestAbortedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real RabbitMQ broker for tests.
 *
 * <p>{@link #shared()} resolves one broker per JVM, in this order (docs/architecture.md §8):
 *
 * <ol>
 *   <li>{@code OUTBOX4J_RABBITMQ_URI} — an external broker, e.g. {@code
 *       amqp://guest:guest@127.0.0.1:5672};
 *   <li>Testcontainers with the {@code rabbitmq} image when a Docker engine answers (disable with
 *       {@code OUTBOX4J_TESTCONTAINERS=false});
 *   <li>otherwise the locally installed {@code rabbitmq-server} (Debian/Ubuntu: {@code apt-get
 *       install -y rabbitmq-server}; the package's own service need not run), started as a private
 *       node: its own node name, AMQP and distribution ports picked free on 127.0.0.1, its own base
 *       directory (owned by the {@code rabbitmq} user when the JVM runs as root, because the server
 *       drops to that user) and its own Erlang cookie (the base directory is the node's {@code
 *       HOME}), so it neither depends on nor disturbs another node on the machine, the package's
 *       default one included. It is up in about 6 seconds.
 * </ol>
 *
 * The shared broker is stopped (and its directory deleted) by a JVM shutdown hook. Credentials are
 * {@code guest}/{@code guest} unless the external URI says otherwise.
 *
 * <p>{@link #rabbitmqctl(String...)} runs {@code rabbitmqctl} against the node (for example to
 * raise a resource alarm with {@code set_vm_memory_high_watermark 0}); it is possible for the local
 * and the Testcontainers broker, not for an external one ({@link #controllable()}).
 */
public final class RabbitMqServer {
    /** Environment variable naming an external broker as an AMQP URI. */
    public static final String URI_ENV = "OUTBOX4J_RABBITMQ_URI";

    /** The Docker image Testcontainers runs when Docker answers. */
    public static final String IMAGE = "rabbitmq:3.13";

    private static final Logger LOG = LoggerFactory.getLogger(RabbitMqServer.class);

    /** About 6 s on an idle 2-core machine; far more when many builds share it. */
    private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

    private static final Duration CTL_TIMEOUT = Duration.ofSeconds(60);
    private static RabbitMqServer shared;

    /** Why the first start failed: the cause of every later call's failure, without a retry. */
    private static RuntimeException failure;

    private final String host;
    private final int port;
    private final String username;
    private final String password;
    private final String virtualHost;
    private final String description;
    private final Control control;

    private RabbitMqServer(
            String host,
            int port,
            String username,
            String password,
            String virtualHost,
            String description,
            Control control) {
        this.host = host;
        this.port = port;
        this.username = username;
        this.password = password;
        this.virtualHost = virtualHost;
        this.description = description;
        this.control = control;
    }

    /**
     * Returns the broker shared by every test of this JVM, starting it on first use.
     *
     * @return the shared broker; never stopped before the JVM exits
     */
    @SuppressWarnings("StaticAssignmentOfThrowable") // failure: only the cause of fresh exceptions
    public static synchronized RabbitMqServer shared() {
        if (failure != null) {
            // tried once in this JVM already: do not pay the start-up time again per test
            throw new IllegalStateException(
                    "RabbitMQ could not be started earlier in this JVM (not tried again)", failure);
        }
        if (shared == null) {
            try {
                shared = resolve();
            } catch (RuntimeException e) {
                failure = e;
                throw e;
            }
            RabbitMqServer s = shared;
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(s::shutdown, "outbox4j-rabbitmq-shutdown"));
            LOG.info("RabbitMQ for tests: {}", s.description);
        }
        return shared;
    }

    private static RabbitMqServer resolve() {
        var external = ServerSupport.env(URI_ENV);
        if (external.isPresent()) {
            return fromUri(external.get());
        }
        if (ServerSupport.dockerAvailable()) {
            return Container.start();
        }
        Path sbin = Local.findScripts();
        if (sbin == null) {
            throw ServerSupport.unavailable(
                    "RabbitMQ",
                    "apt-get install -y rabbitmq-server (the tests start a "
                            + "private node themselves), or set "
                            + URI_ENV
                            + "=amqp://user:pass@host:port");
        }
        try {
            try {
                return Local.start(sbin);
            } catch (IllegalStateException e) {
                String m = String.valueOf(e.getMessage());
                if (!m.contains("eaddrinuse") && !m.contains("already_used")) {
                    throw e;
                }
                LOG.warn(
                        "a port picked for RabbitMQ was taken meanwhile; trying other ports once",
                        e);
                return Local.start(sbin);
            }
        } catch (RuntimeException e) {
            LOG.error("could not start a local RabbitMQ node", e);
            throw ServerSupport.unavailable(
                    "RabbitMQ",
                    "the local rabbitmq-server failed to start ("
                            + e.getMessage()
                            + "); set "
                            + URI_ENV
                            + "=amqp://user:pass@host:port or start a Docker engine");
        }
    }

    private static RabbitMqServer fromUri(String value) {
        URI uri;
        try {
            uri = new URI(value);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(
                    URI_ENV + " must be an amqp:// URI, but was '" + value + "'", e);
        }
        if (!"amqp".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException(
                    URI_ENV
                            + " must be an amqp://host[:port] URI, but was '"
                            + uri.getScheme()
                            + "://"
                            + uri.getHost()
                            + "...'");
        }
        String user = "guest";
        String pass = "guest";
        if (uri.getRawUserInfo() != null) {
            String[] parts = uri.getRawUserInfo().split(":", 2);
            user = URLDecoder.decode(parts[0], StandardCharsets.UTF_8);
            pass = parts.length > 1 ? URLDecoder.decode(parts[1], StandardCharsets.UTF_8) : "";
        }
        String path = uri.getRawPath();
        String vhost =
                path == null || path.isEmpty() || path.equals("/")
                        ? "/"
                        : URLDecoder.decode(path.substring(1), StandardCharsets.UTF_8);
        int p = uri.getPort() == -1 ? 5672 : uri.getPort();
        return new RabbitMqServer(
                uri.getHost(),
                p,
                user,
                pass,
                vhost,
                "external RabbitMQ at " + uri.getHost() + ":" + p + " (" + URI_ENV + ")",
                null);
    }

    /**
     * Returns the AMQP URI of the broker, credentials included.
     *
     * @return e.g. {@code amqp://guest:guest@127.0.0.1:40123/%2F}
     */
    public String uri() {
        return "amqp://"
                + enc(username)
                + ":"
                + enc(password)
                + "@"
                + host
                + ":"
                + port
                + "/"
                + enc(virtualHost);
    }

    private static String enc(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * Returns the host to connect to.
     *
     * @return the host, {@code 127.0.0.1} for a local node
     */
    public String host() {
        return host;
    }

    /**
     * Returns the AMQP port.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * Returns the user name.
     *
     * @return the user, {@code guest} unless the external URI names another
     */
    public String username() {
        return username;
    }

    /**
     * Returns the password.
     *
     * @return the password, {@code guest} unless the external URI names another
     */
    public String password() {
        return password;
    }

    /**
     * Returns the virtual host.
     *
     * @return the virtual host, {@code /} by default
     */
    public String virtualHost() {
        return virtualHost;
    }

    /**
     * Tells whether {@link #rabbitmqctl(String...)} can run against this broker.
     *
     * @return {@code true} for a local or Testcontainers broker, {@code false} for an external one
     */
    public boolean controllable() {
        return control != null;
    }

    /**
     * Runs {@code rabbitmqctl} against this broker's node, e.g. {@code
     * rabbitmqctl("set_vm_memory_high_watermark", "0")}.
     *
     * @param args the command and its arguments
     * @return what the command printed
     * @throws TestAbortedException when the broker is external ({@link #controllable()} is false):
     *     the test needing it is skipped with that reason (also under CI, since CI never sets an
     *     external broker)
     * @throws IllegalStateException when the command fails
     */
    public String rabbitmqctl(String... args) {
        if (control == null) {
            throw new TestAbortedException(
                    "rabbitmqctl cannot run against "
                            + description
                            + "; unset "
                            + URI_ENV
                            + " to let the tests start their own broker");
        }
        return control.ctl(List.of(args));
    }

    @Override
    public String toString() {
        return description;
    }

    private void shutdown() {
        if (control != null) {
            try {
                control.stop();
            } catch (RuntimeException e) {
                LOG.warn("could not stop {}", description, e);
            }
        }
    }

    /** Runs commands against a broker the fixture started and stops it. */
    private interface Control {
        String ctl(List<String> args);

        void stop();
    }

    /** The Testcontainers path, in its own class so its absence or failure stays contained. */
    private static final class Container {
        static RabbitMqServer start() {
            var c =
                    new org.testcontainers.containers.RabbitMQContainer(
                            org.testcontainers.utility.DockerImageName.parse(IMAGE));
            c.start();
            Control control =
                    new Control() {
                        @Override
                        public String ctl(List<String> args) {
                            List<String> cmd = new ArrayList<>();
                            cmd.add("rabbitmqctl");
                            cmd.addAll(args);
                            try {
                                var r = c.execInContainer(cmd.toArray(new String[0]));
                                if (r.getExitCode() != 0) {
                                    throw new IllegalStateException(
                                            "rabbitmqctl "
                                                    + args
                                                    + " failed ("
                                                    + r.getExitCode()
                                                    + "): "
                                                    + r.getStdout()
                                                    + r.getStderr());
                                }
                                return r.getStdout();
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new IllegalStateException(
                                        "interrupted running rabbitmqctl " + args, e);
                            }
                        }

                        @Override
                        public void stop() {
                            c.stop();
                        }
                    };
            return new RabbitMqServer(
                    c.getHost(),
                    c.getAmqpPort(),
                    c.getAdminUsername(),
                    c.getAdminPassword(),
                    "/",
                    "Testcontainers " + IMAGE + " at " + c.getHost() + ":" + c.getAmqpPort(),
                    control);
        }
    }

    /**
     * A private node of the locally installed server. Everything it needs differs from any other
     * node on the machine: node name, AMQP port, distribution port, base directory and Erlang
     * cookie (through {@code HOME}). Only epmd (port 4369) is shared, as Erlang intends.
     */
    private static final class Local implements Control {
        private final Path sbin;
        private final Path base;
        private final String node;
        private final Map<String, String> env;
        private final List<String> runAs;

        private Local(
                Path sbin, Path base, String node, Map<String, String> env, List<String> runAs) {
            this.sbin = sbin;
            this.base = base;
            this.node = node;
            this.env = env;
            this.runAs = runAs;
        }

        /**
         * Finds the directory of the real scripts (not Debian's /usr/sbin wrappers, which force a
         * HOME).
         */
        static Path findScripts() {
            List<Path> candidates =
                    new ArrayList<>(
                            List.of(
                                    Path.of("/usr/lib/rabbitmq/bin"),
                                    Path.of("/usr/local/sbin"),
                                    Path.of("/opt/homebrew/sbin"),
                                    Path.of("/usr/local/opt/rabbitmq/sbin")));
            ServerSupport.env("RABBITMQ_HOME")
                    .ifPresent(h -> candidates.add(0, Path.of(h, "sbin")));
            for (Path dir : candidates) {
                if (Files.isExecutable(dir.resolve("rabbitmq-server"))
                        && Files.isExecutable(dir.resolve("rabbitmqctl"))) {
                    return dir;
                }
            }
            return null;
        }

        static RabbitMqServer start(Path sbin) {
            int port = ServerSupport.freePort();
            int distPort = ServerSupport.freePort();
            while (distPort == port) {
                distPort = ServerSupport.freePort();
            }
            String node = "outbox4j-" + port + "@localhost";
            Path base;
            try {
                base = Files.createTempDirectory("outbox4j-rabbitmq-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            List<String> runAs = prepareOwnership(base);
            Map<String, String> env = new LinkedHashMap<>();
            env.put("HOME", base.toString());
            env.put("RABBITMQ_NODENAME", node);
            env.put("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1");
            env.put("RABBITMQ_NODE_PORT", Integer.toString(port));
            env.put("RABBITMQ_DIST_PORT", Integer.toString(distPort));
            env.put(
                    "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS",
                    "-kernel inet_dist_use_interface {127,0,0,1}");
            env.put("RABBITMQ_MNESIA_BASE", base.resolve("mnesia").toString());
            env.put("RABBITMQ_LOG_BASE", base.resolve("log").toString());
            env.put("RABBITMQ_PID_FILE", base.resolve("rabbitmq.pid").toString());
            // Keep the machine's own settings (/etc/rabbitmq) out: this node is configured only by
            // the above.
            env.put("RABBITMQ_CONF_ENV_FILE", base.resolve("rabbitmq-env.conf").toString());
            env.put("RABBITMQ_CONFIG_FILE", base.resolve("rabbitmq").toString());
            env.put("RABBITMQ_ADVANCED_CONFIG_FILE", base.resolve("advanced.config").toString());
            env.put("RABBITMQ_ENABLED_PLUGINS_FILE", base.resolve("enabled_plugins").toString());
            Local local = new Local(sbin, base, node, env, runAs);
            long started = System.nanoTime();
            local.run(
                    List.of(sbin.resolve("rabbitmq-server").toString(), "-detached"),
                    START_TIMEOUT);
            try {
                local.ctl(
                        List.of(
                                "wait",
                                "--timeout",
                                Long.toString(START_TIMEOUT.toSeconds()),
                                base.resolve("rabbitmq.pid").toString()),
                        START_TIMEOUT.plusSeconds(10));
            } catch (RuntimeException e) {
                String logTail = local.logTail();
                try {
                    local.stop();
                } catch (RuntimeException notRunning) {
                    e.addSuppressed(notRunning);
                }
                throw new IllegalStateException(
                        "RabbitMQ node "
                                + node
                                + " did not start: "
                                + e.getMessage()
                                + "\n--- server log tail ---\n"
                                + logTail,
                        e);
            }
            LOG.info(
                    "started RabbitMQ node {} on 127.0.0.1:{} in {} ms (base {})",
                    node,
                    port,
                    Duration.ofNanos(System.nanoTime() - started).toMillis(),
                    base);
            return new RabbitMqServer(
                    "127.0.0.1",
                    port,
                    "guest",
                    "guest",
                    "/",
                    "local RabbitMQ node " + node + " on 127.0.0.1:" + port + " (" + sbin + ")",
                    local);
        }

        /**
         * Writes the node's own Erlang cookie and, when running as root, hands the base directory
         * to the {@code rabbitmq} user (the server refuses to run as root on Debian and drops to
         * that user).
         *
         * @return the command prefix that runs a process as the node's user (empty: as this user)
         */
        private static List<String> prepareOwnership(Path base) {
            try {
                Path cookie = base.resolve(".erlang.cookie");
                byte[] random = new byte[20];
                new SecureRandom().nextBytes(random);
                Files.writeString(
                        cookie,
                        HexFormat.of().formatHex(random).toUpperCase(java.util.Locale.ROOT));
                Files.setPosixFilePermissions(cookie, PosixFilePermissions.fromString("r--------"));
                boolean root = "root".equals(System.getProperty("user.name"));
                if (!root) {
                    return List.of();
                }
                UserPrincipalLookupService lookup =
                        base.getFileSystem().getUserPrincipalLookupService();
                UserPrincipal user;
                GroupPrincipal group;
                try {
                    user = lookup.lookupPrincipalByName("rabbitmq");
                    group = lookup.lookupPrincipalByGroupName("rabbitmq");
                } catch (IOException noSuchUser) {
                    return List.of(); // a generic install may run as root
                }
                for (Path p : List.of(base, cookie)) {
                    PosixFileAttributeView view =
                            Files.getFileAttributeView(p, PosixFileAttributeView.class);
                    view.setOwner(user);
                    view.setGroup(group);
                }
                for (String runuser :
                        List.of("/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser")) {
                    if (Files.isExecutable(Path.of(runuser))) {
                        return List.of(runuser, "-u", "rabbitmq", "--");
                    }
                }
                return List.of("su", "rabbitmq", "-s", "/bin/sh", "-c", "exec \"$0\" \"$@\"");
            } catch (IOException e) {
                throw new UncheckedIOException("could not prepare " + base, e);
            }
        }

        @Override
        public String ctl(List<String> args) {
            return ctl(args, CTL_TIMEOUT);
        }

        private String ctl(List<String> args, Duration timeout) {
            List<String> cmd = new ArrayList<>();
            cmd.add(sbin.resolve("rabbitmqctl").toString());
            cmd.add("-n");
            cmd.add(node);
            cmd.addAll(args);
            return run(cmd, timeout);
        }

        @Override
        public void stop() {
            try {
                ctl(List.of("stop", base.resolve("rabbitmq.pid").toString()));
            } finally {
                ServerSupport.deleteQuietly(base);
            }
        }

        private String run(List<String> command, Duration timeout) {
            List<String> cmd = new ArrayList<>(runAs);
            cmd.add("env");
            env.forEach((k, v) -> cmd.add(k + "=" + v));
            cmd.addAll(command);
            Path out;
            try {
                out = Files.createTempFile("outbox4j-rabbitmqctl-", ".out");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            try {
                // Output goes to a file, not a pipe: a detached server must not keep our pipe open.
                Process p =
                        new ProcessBuilder(cmd)
                                .directory(base.toFile())
                                .redirectErrorStream(true)
                                .redirectOutput(out.toFile())
                                .redirectInput(
                                        ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                                .start();
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException(
                            String.join(" ", command) + " did not finish within " + timeout);
                }
                String text = Files.readString(out, StandardCharsets.UTF_8);
                if (p.exitValue() != 0) {
                    throw new IllegalStateException(
                            String.join(" ", command)
                                    + " exited with "
                                    + p.exitValue()
                                    + ": "
                                    + text.strip());
                }
                return text;
            } catch (IOException e) {
                throw new UncheckedIOException("could not run " + command, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted running " + command, e);
            } finally {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // best effort
                }
            }
        }

        private String logTail() {
            try (Stream<Path> logs = Files.list(base.resolve("log"))) {
                StringBuilder sb = new StringBuilder();
                for (Path log : logs.filter(p -> p.toString().endsWith(".log")).toList()) {
                    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                    lines.subList(Math.max(0, lines.size() - 30), lines.size())
                            .forEach(l -> sb.append(l).append('\n'));
                }
                return sb.toString();
            } catch (IOException | RuntimeException e) {
                return "(no log: " + e + ")";
            }
        }
    }
}
