package io.outbox4j.faulttests;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link RelayProcess} in a child JVM started with this JVM's class path, which a test can kill
 * with {@code kill -9} ({@link Process#destroyForcibly()} sends SIGKILL on Linux) or stop
 * gracefully. Its output goes to {@code <dir>/<name>.log}, its lease journal to {@code
 * <dir>/<name>.journal}.
 */
public final class ChildRelay implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path journal;
    private final Path log;
    private final long startedAtMillis;

    private ChildRelay(String name, Process process, Path journal, Path log, long startedAt) {
        this.name = name;
        this.process = process;
        this.journal = journal;
        this.log = log;
        this.startedAtMillis = startedAt;
    }

    /**
     * Starts a relay JVM over an outbox database and a Kafka broker.
     *
     * @param name the relay's owner name (also stamped on its records)
     * @param db the outbox database
     * @param bootstrapServers the broker
     * @param settings the relay settings
     * @param dir where its log and journal go
     * @return the running child (it may still be starting: see {@link #awaitClaimed})
     */
    public static ChildRelay start(
            String name,
            OutboxDatabase db,
            String bootstrapServers,
            RelaySettings settings,
            Path dir) {
        return start(name, db, db.jdbcUrl(), bootstrapServers, settings, dir);
    }

    /**
     * {@link #start(String, OutboxDatabase, String, RelaySettings, Path)} with the database reached
     * at another URL (through a proxy, say).
     *
     * @param jdbcUrl the URL the child connects to
     */
    public static ChildRelay start(
            String name,
            OutboxDatabase db,
            String jdbcUrl,
            String bootstrapServers,
            RelaySettings settings,
            Path dir) {
        try {
            Files.createDirectories(dir);
            Path journal = dir.resolve(name + ".journal");
            Path log = dir.resolve(name + ".log");
            Files.deleteIfExists(journal);
            List<String> cmd = new ArrayList<>();
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.addAll(
                    List.of(
                            "-Xmx256m",
                            "-XX:+UseSerialGC",
                            "-XX:TieredStopAtLevel=1",
                            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                            "-Dorg.slf4j.simpleLogger.showDateTime=true",
                            // wall-clock times, to line the logs of several children up
                            "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                            // membership changes (joins, handovers, leaves): one line each
                            "-Dorg.slf4j.simpleLogger.log.io.outbox4j.engine.Members=info",
                            "-cp",
                            System.getProperty("java.class.path"),
                            RelayProcess.class.getName()));
            // PostgreSQL shows each child's sessions under its name (pg_stat_activity)
            cmd.add(
                    "jdbcUrl="
                            + (jdbcUrl.startsWith("jdbc:postgresql:")
                                    ? jdbcUrl
                                            + (jdbcUrl.contains("?") ? "&" : "?")
                                            + "ApplicationName="
                                            + name
                                    : jdbcUrl));
            cmd.add("user=" + db.user());
            cmd.add("password=" + db.password());
            cmd.add("bootstrap=" + bootstrapServers);
            cmd.add("owner=" + name);
            cmd.add("journal=" + journal);
            for (Map.Entry<String, String> e : settings.toArgs().entrySet()) {
                cmd.add(e.getKey() + "=" + e.getValue());
            }
            long t0 = System.currentTimeMillis();
            Process p =
                    new ProcessBuilder(cmd)
                            .redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()))
                            .start();
            return new ChildRelay(name, p, journal, log, t0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start relay child " + name, e);
        }
    }

    /** The relay's name. */
    public String name() {
        return name;
    }

    /** When the child was started (epoch ms). */
    public long startedAtMillis() {
        return startedAtMillis;
    }

    /** Whether the process is still running. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** What the child's lease journal says now. */
    public LeaseJournal.Snapshot journal() {
        return LeaseJournal.read(journal);
    }

    /**
     * Whether the relay is inside a membership renewal now, by the last {@code M+} / {@code M-}
     * line in the last 16 KB of its journal ({@link LeaseJournal}).
     *
     * @return true between the start and the end of a renewal
     */
    public boolean inRenewal() {
        try (RandomAccessFile f = new RandomAccessFile(journal.toFile(), "r")) {
            long length = f.length();
            long from = Math.max(0, length - 16_384);
            byte[] tail = new byte[(int) (length - from)];
            f.seek(from);
            f.readFully(tail);
            String s = (from == 0 ? "\n" : "") + new String(tail, StandardCharsets.UTF_8);
            return s.lastIndexOf("\nM+\n") > s.lastIndexOf("\nM-\n");
        } catch (NoSuchFileException | FileNotFoundException e) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the lease journal " + journal, e);
        }
    }

    /**
     * Waits until the relay is running and has claimed at least {@code deliveries} deliveries.
     *
     * @param deliveries how many claimed deliveries to wait for (0: only running)
     * @param timeout how long at most
     * @throws IllegalStateException if the child died or the time ran out, with its log's tail
     * @throws InterruptedException if interrupted
     */
    public void awaitClaimed(long deliveries, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            LeaseJournal.Snapshot s = journal();
            if (s.ready() && s.claimed() >= deliveries) {
                return;
            }
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "relay child "
                                + name
                                + " exited with "
                                + process.exitValue()
                                + " before claiming "
                                + deliveries
                                + ": "
                                + logTail());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "relay child "
                                + name
                                + " had not claimed "
                                + deliveries
                                + " deliveries after "
                                + timeout
                                + " (journal: "
                                + s.claimed()
                                + "): "
                                + logTail());
            }
            Thread.sleep(5);
        }
    }

    /**
     * Waits until the relay holds at least one lease (it is working on messages), so that a kill
     * right after it lands while messages are in flight.
     *
     * @param timeout how long at most
     * @return whether it held leases in time
     * @throws InterruptedException if interrupted
     */
    public boolean awaitHoldingLeases(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (journal().leasedIds().isEmpty()) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    /**
     * Kills the child with SIGKILL and waits until it is gone.
     *
     * @return when the signal was sent (epoch ms)
     * @throws InterruptedException if interrupted
     */
    public long kill() throws InterruptedException {
        long at = System.currentTimeMillis();
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("relay child " + name + " survived SIGKILL for 30 s");
        }
        return at;
    }

    /**
     * Sends a signal to the child with {@code kill -<signal> <pid>} (for {@code STOP} and {@code
     * CONT}, which {@link Process} cannot send).
     *
     * @param signal the signal name without {@code SIG}: {@code STOP}, {@code CONT}, ...
     * @return when the signal was sent (epoch ms, just before {@code kill} ran)
     * @throws IllegalStateException if {@code kill} failed
     * @throws InterruptedException if interrupted
     */
    public long signal(String signal) throws InterruptedException {
        long at = System.currentTimeMillis();
        try {
            Process kill =
                    new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                            .redirectErrorStream(true)
                            .start();
            String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException(
                        "kill -" + signal + " " + process.pid() + " failed: " + out.trim());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + signal, e);
        }
        return at;
    }

    /**
     * Sends SIGTERM ({@link Process#destroy()} on Linux, which also closes the child's standard
     * input): the child's shutdown hook closes the relay gracefully (it finishes its batches and
     * leaves the outbox) and the JVM exits (with 0 here: the end of standard input makes {@link
     * RelayProcess} call {@code System.exit(0)} while the hook runs). Kills it if it has not exited
     * in time.
     *
     * @param timeout how long to wait for the graceful exit
     * @return whether it exited by itself within {@code timeout}
     * @throws InterruptedException if interrupted
     */
    public boolean terminate(Duration timeout) throws InterruptedException {
        process.destroy();
        if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return true;
        }
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        return false;
    }

    /** The exit code of a child that has exited. */
    public int exitValue() {
        return process.exitValue();
    }

    /** The child's whole output so far. */
    public List<String> logLines() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException | UncheckedIOException e) {
            return List.of("(no log: " + e.getMessage() + ")");
        }
    }

    /**
     * Stops the child gracefully (closes its standard input: the relay closes and the JVM exits),
     * killing it if it has not exited in time.
     *
     * @param timeout how long to wait for a graceful exit
     * @return the exit code
     * @throws InterruptedException if interrupted
     */
    public int stop(Duration timeout) throws InterruptedException {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // already gone
        }
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        return process.exitValue();
    }

    /** The last lines of the child's output. */
    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** Kills the child if it still runs. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "relay child " + name + " (pid " + process.pid() + ")";
    }
}
