package io.outbox4j.testservices;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Shared plumbing of the server fixtures: resolution order (docs/architecture.md §8), free ports,
 * temp directories and what happens when a server cannot be had.
 *
 * <p>Every fixture resolves its server in this order: an explicit address from an environment
 * variable, then Testcontainers when a Docker engine answers, then a local installation or an
 * in-JVM server started on a free loopback port. A fixture whose server cannot be had calls {@link
 * #unavailable}: under {@code CI=true} that fails the test; elsewhere it aborts (skips) the test
 * with the same message.
 */
public final class ServerSupport {
    private ServerSupport() {}

    /**
     * Tells whether the run is a CI run, where nothing may skip.
     *
     * @return {@code true} when the environment variable {@code CI} is {@code true}
     */
    public static boolean isCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /**
     * Reads a non-blank environment variable.
     *
     * @param name the variable name
     * @return its value, or empty when unset or blank
     */
    public static Optional<String> env(String name) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.strip());
    }

    /**
     * Tells whether a Docker engine answers, so Testcontainers can be used. Never throws.
     *
     * @return {@code true} if Testcontainers can reach a Docker engine
     */
    public static boolean dockerAvailable() {
        if ("false".equalsIgnoreCase(System.getenv("OUTBOX4J_TESTCONTAINERS"))) {
            return false;
        }
        try {
            return org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
        } catch (Throwable e) {
            return false;
        }
    }

    /**
     * Returns a free TCP port on the loopback interface.
     *
     * @return a port that was free a moment ago
     */
    public static int freePort() {
        // The OS may hand the same ephemeral port to two calls in a row (the first socket is closed
        // again at once); a server asking for two ports (Kafka's broker and controller) would then
        // fail with "two listeners on the same port". Never hand out a port twice in one JVM.
        for (int tries = 0; tries < 50; tries++) {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                s.setReuseAddress(true);
                int port = s.getLocalPort();
                if (HANDED_OUT.add(port)) {
                    return port;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("no free loopback port", e);
            }
        }
        throw new IllegalStateException(
                "no loopback port that was not handed out before in 50 tries");
    }

    private static final java.util.Set<Integer> HANDED_OUT =
            java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Creates a temporary directory that is deleted when the JVM exits (best effort).
     *
     * @param prefix the directory name prefix
     * @return the new directory
     */
    public static Path tempDir(String prefix) {
        try {
            Path dir = Files.createTempDirectory("outbox4j-" + prefix + "-");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(dir)));
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Deletes a directory tree, ignoring failures.
     *
     * @param dir the directory
     */
    public static void deleteQuietly(Path dir) {
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException ignored) {
            // best effort
        }
    }

    /**
     * Reports a server that cannot be had: fails under {@code CI=true}, aborts the test otherwise.
     *
     * @param server which server, e.g. "PostgreSQL"
     * @param howToFix what to install or which variable to set
     * @return never returns normally; declared so callers can write {@code throw unavailable(...)}
     */
    public static RuntimeException unavailable(String server, String howToFix) {
        String message = server + " is not available for the tests: " + howToFix;
        if (isCi()) {
            throw new IllegalStateException(message + " (CI=true: a missing server fails the run)");
        }
        throw new org.opentest4j.TestAbortedException(message);
    }
}
