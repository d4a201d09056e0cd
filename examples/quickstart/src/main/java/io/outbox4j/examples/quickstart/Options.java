package io.outbox4j.examples.quickstart;

import java.net.URI;
import java.util.Locale;

/**
 * Command-line options of the quickstart; {@link #parse} rejects bad input with a message naming
 * the option.
 */
final class Options {
    /**
     * The default write rate, orders per second over all writers, chosen by measurement: a rate the
     * embedded defaults (H2, one relay) relay as it comes, so that commit-to-publish shows the
     * outbox's latency rather than a queue. On a 2-core machine shared with another build, after
     * the warm-up: 1 000/s gave p50 11.7 ms, p99 112 ms; unpaced, 4 writers committed 4 700/s and
     * the relay published 1 500/s (p99 8.9 s, all of it queueing).
     */
    static final int DEFAULT_RATE = 1000;

    static final String USAGE =
            String.join(
                    "\n",
                    "Usage: quickstart [options]",
                    "",
                    "Writes orders and their events in transactions, relays the events to a broker through outbox4j,",
                    "reads them back and checks that none was lost or reordered. With no options everything is",
                    "embedded: an H2 database and an in-process Kafka broker.",
                    "",
                    "Options:",
                    "  --messages N     orders (and events) to write                       (default 20000)",
                    "  --writers N      threads writing orders                             (default 4)",
                    "  --relays N       relay instances dispatching the outbox             (default 1)",
                    "  --keys N         distinct customers, the events' ordering keys      (default 200)",
                    "  --rate N|max     orders per second, over all writers together      (default "
                            + DEFAULT_RATE
                            + ")",
                    "                   (max: each writer commits as fast as it can; the embedded H2 store",
                    "                   relays less than that, and the latency then is time spent queueing)",
                    "  --store URL      jdbc:h2:..., jdbc:postgresql://..., jdbc:mariadb://... or mongodb://...",
                    "                   (default: embedded H2; a MongoDB store needs a replica set)",
                    "  --publisher URI  kafka://host:port, amqp://user:pass@host:port, or sqs://host:port",
                    "                   (sqs+https://host for TLS; default: an embedded Kafka broker)",
                    "  --warmup N       orders written first and left out of the figures   (default 2000)",
                    "  --timeout SEC    how long to wait for the broker and for every event to be read back (default 120)",
                    "  --help           print this help",
                    "");

    int messages = 20_000;

    /** Orders per second over all writers; 0: as fast as they can. */
    int rate = DEFAULT_RATE;

    int writers = 4;
    int relays = 1;
    int keys = 200;
    String store = "jdbc:h2:mem:quickstart;DB_CLOSE_DELAY=-1";
    URI publisher;
    int timeoutSeconds = 120;

    /** Orders written and relayed before the measured ones, left out of the figures. */
    int warmup = 2000;

    boolean help;

    /** Thrown for a bad command line; the message says what was wrong. */
    static final class BadOption extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadOption(String message) {
            super(message);
        }
    }

    static Options parse(String... args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (name.equals("--help") || name.equals("-h")) {
                o.help = true;
                continue;
            }
            if (!name.startsWith("--")) {
                throw new BadOption("unexpected argument '" + arg + "'");
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new BadOption(name + " needs a value");
                }
                value = args[++i];
            }
            switch (name) {
                case "--messages" -> o.messages = positive(name, value, 10_000_000);
                case "--writers" -> o.writers = positive(name, value, 256);
                case "--relays" -> o.relays = positive(name, value, 64);
                case "--keys" -> o.keys = positive(name, value, 1_000_000);
                case "--rate" -> {
                    if (value.strip().equalsIgnoreCase("max")) {
                        o.rate = 0;
                    } else {
                        try {
                            o.rate = positive(name, value, 10_000_000);
                        } catch (BadOption e) {
                            throw new BadOption(e.getMessage() + " (or max)");
                        }
                    }
                }
                case "--warmup" ->
                        o.warmup = value.strip().equals("0") ? 0 : positive(name, value, 1_000_000);
                case "--timeout" -> o.timeoutSeconds = positive(name, value, 86_400);
                case "--store" -> o.store = store(value);
                case "--publisher" -> o.publisher = publisher(value);
                default -> throw new BadOption("unknown option '" + name + "'");
            }
        }
        return o;
    }

    private static int positive(String name, String value, int max) {
        try {
            int n = Integer.parseInt(value.strip());
            if (n < 1 || n > max) {
                throw new BadOption(name + " must be between 1 and " + max + ", but was " + n);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new BadOption(name + " must be a whole number, but was '" + value + "'");
        }
    }

    private static String store(String value) {
        String v = value.strip();
        String lower = v.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:h2:")
                || lower.startsWith("jdbc:postgresql:")
                || lower.startsWith("jdbc:mariadb:")
                || lower.startsWith("jdbc:mysql:")
                || lower.startsWith("mongodb://")
                || lower.startsWith("mongodb+srv://")) {
            return v;
        }
        throw new BadOption(
                "--store must be a jdbc:h2:, jdbc:postgresql:, jdbc:mariadb: or mongodb:// URL, but was '"
                        + value
                        + "'");
    }

    private static URI publisher(String value) {
        URI uri;
        try {
            uri = URI.create(value.strip());
        } catch (IllegalArgumentException e) {
            throw new BadOption("--publisher is not a valid URI: '" + value + "'");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("kafka")
                && !scheme.equals("amqp")
                && !scheme.equals("amqps")
                && !scheme.equals("sqs")
                && !scheme.equals("sqs+http")
                && !scheme.equals("sqs+https")) {
            throw new BadOption(
                    "--publisher must start with kafka://, amqp://, amqps:// or sqs://, but was '"
                            + value
                            + "'");
        }
        if (uri.getHost() == null) {
            throw new BadOption(
                    "--publisher needs a host, as in kafka://localhost:9092, but was '"
                            + value
                            + "'");
        }
        return uri;
    }
}
