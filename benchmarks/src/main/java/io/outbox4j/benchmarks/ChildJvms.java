package io.outbox4j.benchmarks;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the scale-out scenarios ({@code scale}, {@code scale-io}) share: child JVMs started on this
 * JVM's class path with their output in a log file, waiting for them to be ready, stopping them,
 * and the meters read around a timed drain (CPU of processes and of the whole machine from /proc,
 * database sessions from {@code pg_stat_activity}).
 */
final class ChildJvms {
    /** How long a child may take to be ready. */
    static final Duration START_TIMEOUT = Duration.ofMinutes(3);

    /** Repository folders of jars the child JVMs are started without (see classPath). */
    private static final List<String> PEER_ONLY =
            List.of(
                    "/com/gruelbox/",
                    "/org/hibernate/validator/",
                    "/javax/validation/",
                    "/javax/el/",
                    "/org/glassfish/javax.el/");

    /** Repository folders of jars only a namastack-outbox instance is started with. */
    private static final List<String> NAMASTACK_ONLY =
            List.of(
                    "/io/namastack/",
                    "/org/springframework/",
                    "/org/jetbrains/",
                    "/tools/jackson/");

    private ChildJvms() {}

    /**
     * Starts a JVM on this JVM's class path, its output to {@code <logs>/<name>.log}.
     *
     * @param name the log file's name
     * @param heap the maximum heap, e.g. {@code 512m}
     * @param environment extra environment variables (the parent's {@code OUTBOX4J_*} ones are
     *     removed)
     * @param logs the folder of the log file
     * @param command JVM options, the main class and its arguments
     * @return the process
     */
    static Process java(
            String name,
            String heap,
            Map<String, String> environment,
            Path logs,
            String... command) {
        return java(name, heap, environment, logs, false, command);
    }

    /**
     * As {@link #java(String, String, Map, Path, String...)}, with namastack-outbox and its Spring
     * Boot on the class path when {@code namastack} (a namastack instance), else without.
     */
    static Process java(
            String name,
            String heap,
            Map<String, String> environment,
            Path logs,
            boolean namastack,
            String... command) {
        List<String> line = new ArrayList<>();
        line.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        line.add("-Xmx" + heap);
        line.add("-XX:+UseG1GC");
        line.add("-cp");
        line.add(classPath(namastack));
        line.addAll(List.of(command));
        try {
            Files.createDirectories(logs);
            ProcessBuilder pb =
                    new ProcessBuilder(line)
                            .redirectErrorStream(true)
                            .redirectOutput(log(logs, name).toFile());
            pb.environment().keySet().removeIf(k -> k.startsWith("OUTBOX4J_"));
            pb.environment().putAll(environment);
            return pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("could not start " + name + ": " + e, e);
        }
    }

    /** The log file of the child {@code name}. */
    static Path log(Path logs, String name) {
        return logs.resolve(name + ".log");
    }

    /**
     * This JVM's class path without the gruelbox peer and its javax validation jars: they are for
     * the e2e and latency scenarios, and the Connect worker's Jersey fails to start beside them;
     * nor namastack-outbox, its Spring Boot, Kotlin and Jackson 3. A namastack instance ({@code
     * namastack}) gets the whole class path (it runs no Jersey).
     */
    static String classPath(boolean namastack) {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(
                        entry ->
                                (namastack
                                                ? Stream.<String>empty()
                                                : Stream.concat(
                                                        PEER_ONLY.stream(),
                                                        NAMASTACK_ONLY.stream()))
                                        .noneMatch(
                                                dir ->
                                                        entry.replace(File.separatorChar, '/')
                                                                .contains(dir)))
                .collect(Collectors.joining(File.pathSeparator));
    }

    /** The last 20 lines of a log. */
    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /**
     * Waits until {@code ready} holds, failing with the child's log when it dies or takes longer
     * than {@link #START_TIMEOUT}.
     */
    static void await(Process p, BooleanSupplier ready, Path log, String what) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!ready.getAsBoolean()) {
            if (!p.isAlive()) {
                throw new IllegalStateException(
                        what
                                + " exited with "
                                + p.exitValue()
                                + " before it was ready:\n"
                                + tail(log));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        what + " not ready in " + START_TIMEOUT + ":\n" + tail(log));
            }
            sleep(100);
        }
    }

    /** Stops a process with SIGTERM, then SIGKILL if it lingers past a minute. */
    static void stop(Process p) {
        p.destroy();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** CPU time of processes of this machine (user + system), from /proc; 0 when unreadable. */
    static long processCpu(List<Long> pids) {
        long nanos = 0;
        for (long pid : pids) {
            try {
                nanos += Cpu.processNanos(pid);
            } catch (IOException | RuntimeException e) {
                // gone or not Linux: counted as nothing
            }
        }
        return nanos;
    }

    /** {busy, total} clock ticks of all cores, from /proc/stat; {-1, -1} when unreadable. */
    static long[] machineTicks() {
        try {
            String cpu = Files.readAllLines(Path.of("/proc/stat")).get(0);
            String[] f = cpu.trim().split("\\s+", -1);
            long total = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {total - idle, total};
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
    }

    /** The share of all cores busy (0..1) between two {@link #machineTicks()}, or -1. */
    static double busy(long[] t0, long[] t1) {
        if (t0[1] < 0 || t1[1] <= t0[1]) {
            return -1;
        }
        return (t1[0] - t0[0]) / (double) (t1[1] - t0[1]);
    }

    /** Database sessions of other clients: {running a statement, of which waiting for a lock}. */
    static double[] sessions(Env env) {
        try (Connection c = env.pool().getConnection();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery(
                                "SELECT count(*) FILTER (WHERE state = 'active'),"
                                        + " count(*) FILTER (WHERE state = 'active'"
                                        + " AND wait_event_type = 'Lock')"
                                        + " FROM pg_stat_activity WHERE datname = current_database()"
                                        + " AND backend_type = 'client backend'"
                                        + " AND pid <> pg_backend_pid()")) {
            rs.next();
            return new double[] {rs.getLong(1), rs.getLong(2)};
        } catch (SQLException e) {
            throw new IllegalStateException("reading pg_stat_activity failed: " + e, e);
        }
    }

    /** Sleeps, turning an interrupt into an exception (the interrupt status is kept). */
    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
