package io.outbox4j.cli;

import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.cli.Arguments.UsageException;
import io.outbox4j.cli.internal.CannotConnectException;
import io.outbox4j.cli.internal.Settings;
import io.outbox4j.cli.internal.SettingsException;
import io.outbox4j.cli.internal.StoreConnection;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The {@code outbox4j} command: statistics of an outbox and its dead letters (list, show, replay,
 * discard), against a JDBC URL or a MongoDB URI, through the store's {@link
 * io.outbox4j.api.OutboxAdmin} port only.
 *
 * <pre>
 * outbox4j stats --store jdbc:postgresql://db:5432/app --user app
 * outbox4j dead-letters list --topic payments
 * outbox4j dead-letters replay pay-42
 * </pre>
 *
 * Exit codes: {@value #OK} done; {@value #STORE_FAILED} the store could not be reached or failed;
 * {@value #USAGE} bad arguments or settings (nothing was changed); {@value #NOT_FOUND} a named dead
 * letter does not exist (or some of the named ones did not). Payloads and header values are never
 * printed unless asked for ({@code show --payload}, {@code show --header-values}).
 */
public final class OutboxCli {
    /** Exit code: the command did what was asked. */
    public static final int OK = 0;

    /** Exit code: the store could not be reached or failed. */
    public static final int STORE_FAILED = 1;

    /** Exit code: bad arguments or settings; nothing was changed. */
    public static final int USAGE = 2;

    /** Exit code: a dead letter named on the command line does not exist. */
    public static final int NOT_FOUND = 3;

    static final String HELP =
            """
            Usage: outbox4j [store options] <command> [options]

            See and fix what an outbox4j outbox holds: counts by state, and dead letters.

            Commands:
              relay --config FILE               run the standalone relay (outbox4j relay --help; docs/relay.md)
              stats                             messages ready, delayed, leased and dead, per topic;
                                                blocked keys; age of the oldest ready message; members
              members                           the relays sharing the outbox, live or lapsed, and how
                                                many of its 256 buckets each owns (docs/scale-out.md)
              dead-letters list                 dead letters, oldest first (one page; --all for every page)
              dead-letters show ID              one dead letter: reason, attempts, times, header names
              dead-letters replay ID...         make dead letters due again (attempts reset, key unblocked)
              dead-letters replay --all         ... every dead letter the filter selects
              dead-letters discard ID...        delete dead letters for good (unblocks their keys)
              dead-letters discard --all        ... every dead letter the filter selects

            Store options (or the environment variables, or the store.* keys of a --config file):
              --store URL          jdbc:postgresql://host:5432/db, jdbc:mariadb://host:3306/db,
                                   jdbc:mysql://host:3306/db, jdbc:h2:..., or mongodb://host:27017/db
                                   (OUTBOX4J_STORE_URL)
              --user NAME          database user (OUTBOX4J_STORE_USER)
              --password SECRET    database password; prefer OUTBOX4J_STORE_PASSWORD, which stays out
                                   of the shell history
              --table NAME         outbox table or MongoDB collection (default outbox_message)
              --database NAME      MongoDB database, when the URI names none
              --config FILE        a relay properties file: its store.* settings are used

            Filters (list, replay --all, discard --all):
              --topic TOPIC        only this topic
              --dead-before WHEN   only dead letters given up before WHEN: an instant
                                   (2026-12-01T00:00:00Z), a date (2026-12-01, UTC) or an age (7d, 12h, 30m)
              --dead-from WHEN     only dead letters given up at or after WHEN

            Other options:
              --limit N            list: page size, 1 to 1000 (default 50)
              --after CURSOR       list: the page after the one that printed this cursor
              --all                list: every page; replay/discard: every dead letter the filter selects
              --payload            show: print the payload (never printed otherwise)
              --header-values      show: print header values (only names otherwise)
              --json               print JSON instead of tables
              --help               print this help

            Exit codes: 0 done; 1 the store could not be reached or failed; 2 bad arguments or
            settings (nothing changed); 3 a dead letter named on the command line does not exist.
            """;

    private static final Map<String, String> STORE_OPTIONS =
            Map.of(
                    "--store", StoreConnection.URL,
                    "--user", StoreConnection.USER,
                    "--password", StoreConnection.PASSWORD,
                    "--table", StoreConnection.TABLE,
                    "--database", StoreConnection.DATABASE);

    private OutboxCli() {}

    /**
     * Runs the command and exits with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        // Quiet libraries (connection pool, MongoDB driver): the command's output is its own.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        if (System.getProperty("org.slf4j.simpleLogger.logFile") == null) {
            System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        System.exit(run(args, System.getenv(), out, err, Clock.systemUTC()));
    }

    /** Runs one command; returns its exit code and never exits the JVM. */
    static int run(
            String[] args, Map<String, String> env, PrintStream out, PrintStream err, Clock clock) {
        Arguments a;
        Command command;
        try {
            a = Arguments.parse(args);
            if (a.flag("--help") || a.words.equals(List.of("help"))) {
                out.print(HELP);
                return OK;
            }
            if (a.words.isEmpty()) {
                throw new UsageException("no command given");
            }
            command = Command.of(a, clock);
        } catch (UsageException | SettingsException e) {
            return usage(err, e.getMessage());
        }
        Settings settings;
        try {
            settings = settings(a, env);
            if (settings.text(StoreConnection.URL).isEmpty()) {
                throw new UsageException(
                        "no store given: use --store URL (jdbc:postgresql://host:5432/db, jdbc:mariadb://…,"
                                + " jdbc:mysql://…, jdbc:h2:… or mongodb://host:27017/db), set OUTBOX4J_STORE_URL,"
                                + " or name a relay config file with --config");
            }
            StoreConnection.checkUrl(settings);
        } catch (UsageException | SettingsException e) {
            return usage(err, e.getMessage());
        }
        try (StoreConnection store = StoreConnection.open(settings, 1, true)) {
            return command.run(
                    store.admin(), store.describe(), new Output(out, a.flag("--json")), err);
        } catch (SettingsException e) {
            return usage(err, e.getMessage());
        } catch (CannotConnectException e) {
            err.println("outbox4j: " + e.getMessage());
            return STORE_FAILED;
        } catch (RuntimeException e) {
            err.println(
                    "outbox4j: the store failed: "
                            + StoreConnection.mask(StoreConnection.rootMessage(e)));
            return STORE_FAILED;
        }
    }

    /**
     * Runs one command against an admin port that is already open (the store options are ignored):
     * the tests' way to run commands against the reference store.
     */
    static int runAgainst(
            OutboxAdmin admin,
            String description,
            String[] args,
            PrintStream out,
            PrintStream err,
            Clock clock) {
        try {
            Arguments a = Arguments.parse(args);
            if (a.words.isEmpty()) {
                throw new UsageException("no command given");
            }
            return Command.of(a, clock)
                    .run(admin, description, new Output(out, a.flag("--json")), err);
        } catch (UsageException | SettingsException e) {
            return usage(err, e.getMessage());
        } catch (RuntimeException e) {
            err.println("outbox4j: the store failed: " + StoreConnection.rootMessage(e));
            return STORE_FAILED;
        }
    }

    private static int usage(PrintStream err, @Nullable String message) {
        err.println("outbox4j: " + message);
        err.println("Run 'outbox4j --help' for usage.");
        return USAGE;
    }

    private static Settings settings(Arguments a, Map<String, String> env) {
        Settings s =
                a.option("--config").isPresent()
                        ? Settings.load(Path.of(a.option("--config").get()), env)
                        : Settings.fromEnvironment(env);
        STORE_OPTIONS.forEach(
                (option, key) -> a.option(option).ifPresent(v -> s.set(key, v, option)));
        // A relay's config file has relay and publisher settings too: check only the store's.
        s.rejectUnknown(new HashSet<>(StoreConnection.KEYS), Set.of(), Set.of("store."), false);
        return s;
    }

    /** Where a command prints: tables and lines for people, or one JSON document. */
    record Output(PrintStream out, boolean json) {}
}
