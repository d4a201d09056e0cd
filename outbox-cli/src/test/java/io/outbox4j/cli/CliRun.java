package io.outbox4j.cli;

import io.outbox4j.api.OutboxAdmin;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * One run of the command in the test's JVM: its exit code and what it printed to standard output
 * and standard error.
 */
record CliRun(int exit, String out, String err) {
    /**
     * Runs the command as its {@code main} does: the store named by the arguments.
     *
     * @param args the arguments
     * @param env the environment it reads (the store's password)
     * @return the run
     */
    static CliRun of(List<String> args, Map<String, String> env) {
        return capture(
                (out, err) ->
                        OutboxCli.run(
                                args.toArray(new String[0]), env, out, err, Clock.systemUTC()));
    }

    /**
     * Runs the command against a store the test holds.
     *
     * @param admin the store
     * @param description how the command names it
     * @param args the arguments
     * @return the run
     */
    static CliRun against(OutboxAdmin admin, String description, String... args) {
        return capture(
                (out, err) ->
                        OutboxCli.runAgainst(
                                admin, description, args, out, err, Clock.systemUTC()));
    }

    private static CliRun capture(BiFunction<PrintStream, PrintStream, Integer> command) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit =
                command.apply(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CliRun(
                exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
