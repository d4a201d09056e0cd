package io.outbox4j.relay;

import io.outbox4j.cli.OutboxCli;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The {@code outbox4j} command of the distribution: {@code outbox4j relay [--config FILE]} runs the
 * standalone relay ({@link OutboxRelay}); every other command ({@code stats}, {@code dead-letters
 * …}) is the operator's tool ({@link OutboxCli}). One class path serves both, so a relay's
 * container image also carries the tool, configured by the same environment.
 */
public final class Outbox4j {
    private Outbox4j() {}

    /**
     * Runs {@code relay …} or an operator command, and exits with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("relay")) {
            PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
            PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
            System.exit(
                    OutboxRelay.run(
                            Arrays.copyOfRange(args, 1, args.length), System.getenv(), out, err));
        }
        OutboxCli.main(args);
    }
}
