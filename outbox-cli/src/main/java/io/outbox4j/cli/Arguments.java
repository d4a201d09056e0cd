package io.outbox4j.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The command line, split into words (the command and its operands), options with a value ({@code
 * --topic orders} or {@code --topic=orders}) and flags ({@code --json}). Options may stand
 * anywhere; {@code --} ends them.
 */
final class Arguments {
    static final Set<String> VALUED =
            Set.of(
                    "--store",
                    "--user",
                    "--password",
                    "--table",
                    "--database",
                    "--config",
                    "--topic",
                    "--dead-before",
                    "--dead-from",
                    "--limit",
                    "--after");

    static final Set<String> FLAGS =
            Set.of("--json", "--help", "--all", "--payload", "--header-values");

    final List<String> words = new ArrayList<>();
    final Map<String, String> options = new LinkedHashMap<>();
    final Set<String> flags = new LinkedHashSet<>();

    /** A command line that cannot be run; the message says why. */
    static final class UsageException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static Arguments parse(String... args) {
        Arguments a = new Arguments();
        boolean optionsEnded = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (optionsEnded || !arg.startsWith("-") || arg.equals("-")) {
                a.words.add(arg);
                continue;
            }
            if (arg.equals("--")) {
                optionsEnded = true;
                continue;
            }
            if (arg.equals("-h")) {
                arg = "--help";
            }
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (FLAGS.contains(name)) {
                if (value != null) {
                    throw new UsageException(
                            name + " takes no value, but was given '" + value + "'");
                }
                a.flags.add(name);
                continue;
            }
            if (!VALUED.contains(name)) {
                throw new UsageException("unknown option '" + name + "'");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException(name + " needs a value");
                }
                value = args[++i];
            }
            if (a.options.containsKey(name)) {
                throw new UsageException(name + " is given twice");
            }
            a.options.put(name, value);
        }
        return a;
    }

    boolean flag(String name) {
        return flags.contains(name);
    }

    Optional<String> option(String name) {
        return Optional.ofNullable(options.get(name));
    }

    /** Rejects options and flags the command does not take, naming the first one. */
    void allowOnly(String command, Set<String> allowed) {
        for (String name : options.keySet()) {
            if (!allowed.contains(name)) {
                throw new UsageException(name + " does not apply to '" + command + "'");
            }
        }
        for (String name : flags) {
            if (!allowed.contains(name)) {
                throw new UsageException(name + " does not apply to '" + command + "'");
            }
        }
    }
}
