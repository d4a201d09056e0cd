package io.outbox4j.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Command-line options: which scenarios to run, their sizes ({@code --quick} for small ones), how
 * many rounds, and where the JSON lines go. Every size has a full and a quick default and can be
 * overridden with {@code --<name> <value>} or {@code --<name>=<value>}.
 */
final class Options {
    /**
     * The scenarios in the order {@code all} runs them: Kafka-free ones first, memory before Kafka
     * starts.
     */
    static final List<String> SCENARIOS =
            List.of("drain", "write", "backlog", "memory", "latency", "e2e", "scale", "scale-io");

    /** name → {full default, quick default, description}. */
    private static final Map<String, String[]> SIZES = new LinkedHashMap<>();

    static {
        size("rounds", "3", "1", "measured rounds per scenario (median reported)");
        size(
                "batch",
                "100",
                "50",
                "claim batch size of the hand-written loops (drain, e2e; the relay runs with the"
                        + " engine's defaults)");
        size("payload", "200", "200", "payload bytes (drain, write, backlog, latency, e2e)");
        size("drain-messages", "200000", "2000", "messages preloaded for each drain run");
        size("write-threads", "8", "4", "business-transaction threads");
        size("write-seconds", "8", "1", "measured seconds per write variant and round");
        size("write-warmup-seconds", "3", "1", "warm-up seconds per write variant");
        size("latency-rate", "500", "200", "committed enqueues per second");
        size(
                "latency-seconds",
                "10",
                "2",
                "seconds per measured latency window (one window per side and round)");
        size("latency-warmup-seconds", "3", "1", "warm-up seconds before each latency window");
        size("backlog-small", "10000", "1000", "pending rows of the small backlog");
        size("backlog-large", "1000000", "10000", "pending rows of the large backlog");
        size("backlog-dead", "100000", "1000", "dead-lettered rows beside the large backlog");
        size("backlog-drain", "10000", "1000", "messages drained from each backlog per round");
        size("e2e-messages", "50000", "1000", "messages per end-to-end run");
        size("memory-small", "100000", "2000", "rows of the small memory drain");
        size("memory-large", "1000000", "20000", "rows of the large memory drain");
        size("memory-payload", "1024", "1024", "payload bytes of the memory drains");
        size("scale-messages", "20000", "2000", "messages of each timed scale-out drain");
        size(
                "scale-keys",
                "1000",
                "100",
                "keys of the first scale-out series (the second has one message per key)");
        size(
                "scale-rounds",
                "2",
                "1",
                "rounds of the scale-out scenario (each starts every setup)");
        size(
                "scale-relays",
                "4",
                "2",
                "most relay processes of the scale-out drains (1, 2, 4, ... up to it)");
        size(
                "scale-tasks",
                "3",
                "2",
                "connector tasks of the second scale-out connector drain (the first has 1)");
        size(
                "scale-namastack",
                "4",
                "0",
                "most namastack-outbox instances of the scale-out drains (1 and this many, each its"
                        + " own JVM; 0: none)");
        size("scale-io-messages", "20000", "2000", "messages of each timed scale-io drain");
        size(
                "scale-io-keys",
                "1000",
                "100",
                "keys of the first scale-io series (the second has one message per key)");
        size(
                "scale-io-relays",
                "8",
                "2",
                "most member relays of the scale-io drains (1, 2, 4, ... up to it; the"
                        + " membership-off setup has 4, or this many if fewer)");
        size("scale-io-sleep-ms", "20", "20", "the scale-io publisher's wait per call (ms)");
        size(
                "scale-io-tuning",
                "1",
                "0",
                "1: also drain the first key spread with one relay at other batch sizes, in-flight"
                        + " bounds and workers (against the defaults)");
        size(
                "scale-io-rounds",
                "2",
                "1",
                "rounds of the scale-io scenario (each starts every setup)");
        size(
                "warmup-messages",
                "20000",
                "200",
                "messages drained by each side before measuring (drain, e2e)");
    }

    private static void size(String name, String full, String quick, String description) {
        SIZES.put(name, new String[] {full, quick, description});
    }

    final Set<String> scenarios;
    final boolean quick;
    final Path out;
    final Path docs;
    private final Map<String, String> given;

    private Options(
            Set<String> scenarios, boolean quick, Path out, Path docs, Map<String, String> given) {
        this.scenarios = scenarios;
        this.quick = quick;
        this.out = out;
        this.docs = docs;
        this.given = given;
    }

    /**
     * Parses the arguments. A single argument holding blanks (as Maven passes {@code
     * -Dbenchmarks.args}) is split.
     *
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException for an unknown option, scenario or a bad number
     */
    static Options parse(String... args) {
        List<String> words = new ArrayList<>();
        for (String a : args) {
            words.addAll(Arrays.asList(a.strip().split("\\s+")));
        }
        words.removeIf(String::isEmpty);
        Set<String> scenarios = new LinkedHashSet<>();
        boolean quick = false;
        Path out = Path.of("results", "results.jsonl");
        Path docs = Path.of("..", "docs", "benchmarks.md");
        Map<String, String> given = new LinkedHashMap<>();
        for (int i = 0; i < words.size(); i++) {
            String w = words.get(i);
            if (!w.startsWith("--")) {
                throw new IllegalArgumentException(
                        "expected an option starting with --, but was '" + w + "'\n" + usage());
            }
            String name = w.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("quick")) {
                quick = true;
                continue;
            }
            if (name.equals("help")) {
                throw new IllegalArgumentException(usage());
            }
            if (value == null) {
                if (i + 1 >= words.size()) {
                    throw new IllegalArgumentException("--" + name + " needs a value\n" + usage());
                }
                value = words.get(++i);
            }
            switch (name) {
                case "scenario" -> {
                    for (String s : value.toLowerCase(Locale.ROOT).split(",", -1)) {
                        if (s.equals("all")) {
                            scenarios.addAll(SCENARIOS);
                        } else if (SCENARIOS.contains(s)) {
                            scenarios.add(s);
                        } else {
                            throw new IllegalArgumentException(
                                    "--scenario must be one of "
                                            + SCENARIOS
                                            + " or all, but was '"
                                            + s
                                            + "'");
                        }
                    }
                }
                case "out" -> out = Path.of(value);
                case "docs" -> docs = Path.of(value);
                default -> {
                    if (!SIZES.containsKey(name)) {
                        throw new IllegalArgumentException(
                                "unknown option --" + name + "\n" + usage());
                    }
                    try {
                        if (Integer.parseInt(value) < 1) {
                            throw new NumberFormatException();
                        }
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(
                                "--"
                                        + name
                                        + " must be a positive integer, but was '"
                                        + value
                                        + "'");
                    }
                    given.put(name, value);
                }
            }
        }
        if (scenarios.isEmpty()) {
            scenarios.addAll(SCENARIOS);
        }
        // keep the documented order whatever order they were given in
        Set<String> ordered = new LinkedHashSet<>();
        for (String s : SCENARIOS) {
            if (scenarios.contains(s)) {
                ordered.add(s);
            }
        }
        return new Options(ordered, quick, out, docs, given);
    }

    /**
     * Returns a size: the given value, else the quick or full default.
     *
     * @param name the size name, e.g. {@code drain-messages}
     * @return its value
     */
    int size(String name) {
        String[] d = SIZES.get(name);
        if (d == null) {
            throw new IllegalArgumentException("no size named " + name);
        }
        return Integer.parseInt(given.getOrDefault(name, quick ? d[1] : d[0]));
    }

    static String usage() {
        StringBuilder b =
                new StringBuilder(
                        "usage: Benchmarks [--scenario drain|write|latency|backlog|e2e|memory|scale|scale-io|all[,...]]"
                                + " [--quick] [--out results/results.jsonl] [--docs ../docs/benchmarks.md] [--<size> N]...\n"
                                + "A run without --quick refreshes results/latest/<scenario>.md and the results table in --docs.\n"
                                + "sizes (full / quick default):\n");
        SIZES.forEach(
                (k, v) ->
                        b.append(
                                String.format(
                                        Locale.ROOT,
                                        "  --%-24s %9s / %-7s %s%n",
                                        k,
                                        v[0],
                                        v[1],
                                        v[2])));
        return b.toString();
    }
}
