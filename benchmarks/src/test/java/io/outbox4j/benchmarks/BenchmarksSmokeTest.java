package io.outbox4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the instrument working: every scenario runs with tiny sizes against the real PostgreSQL and
 * Kafka of {@code test-services} and must produce figures, its checks, a table and one JSON line.
 * The figures themselves are not judged here (tiny runs are noise); the full run is {@code
 * benchmarks/run}.
 */
class BenchmarksSmokeTest {
    @TempDir Path dir;

    @Test
    void everyScenario_withQuickTinySizes_printsFiguresAndAppendsOneJsonLineEach()
            throws Exception {
        Path out = dir.resolve("results.jsonl");
        Path docs = dir.resolve("benchmarks.md");
        Files.writeString(docs, "before\n" + Report.START + "\nold\n" + Report.END + "\nafter\n");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        List<Result> results;
        try (PrintStream ps = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
            results =
                    Benchmarks.run(
                            new String[] {
                                "--scenario all --quick --rounds 1 --out "
                                        + out
                                        + " --docs "
                                        + docs,
                                "--drain-messages",
                                "600",
                                "--warmup-messages",
                                "100",
                                "--write-seconds=1",
                                "--write-warmup-seconds=1",
                                "--write-threads=2",
                                "--latency-rate=100",
                                "--latency-seconds=1",
                                "--latency-warmup-seconds=1",
                                "--backlog-small=500",
                                "--backlog-large=3000",
                                "--backlog-dead=500",
                                "--backlog-drain=500",
                                "--e2e-messages=300",
                                "--memory-small=500",
                                "--memory-large=3000",
                                "--scale-messages=300",
                                "--scale-io-messages=400",
                                "--scale-io-relays=2",
                                "--scale-io-sleep-ms=5"
                            },
                            ps);
        }
        String text = printed.toString(StandardCharsets.UTF_8);
        System.out.println(text);

        assertEquals(Options.SCENARIOS, results.stream().map(r -> r.scenario).toList(), text);
        for (Result r : results) {
            Map<String, Double> figures = r.figures();
            assertFalse(figures.isEmpty(), r.scenario + " produced no figures");
            figures.forEach(
                    (k, v) ->
                            assertTrue(
                                    Double.isFinite(v) && v >= 0,
                                    r.scenario + "." + k + " is not a measurement: " + v));
            assertFalse(r.checks.isEmpty(), r.scenario + " has no target check");
            assertTrue(
                    text.contains("== " + r.title + " =="), "no table printed for " + r.scenario);
            if (r.scenario.equals("e2e") || r.scenario.equals("latency")) {
                // the peer ran as a side of its own in the same rounds
                String peer = r.scenario.equals("e2e") ? "gruelbox_msgs_per_s" : "gruelbox_p99_ms";
                assertTrue(
                        figures.containsKey(peer),
                        r.scenario + " has no gruelbox side: " + figures.keySet());
                assertTrue(
                        r.checks.stream().anyMatch(c -> c.name().contains("gruelbox")),
                        r.scenario + " has no gruelbox check");
                // namastack-outbox too (issue 27), and in e2e the competent hand-written relay
                List<String> others =
                        r.scenario.equals("e2e")
                                ? List.of(
                                        "namastack_msgs_per_s",
                                        "competent1_msgs_per_s",
                                        "competent2_msgs_per_s",
                                        "keyed_vs_unkeyed")
                                : List.of("namastack_p99_ms", "standalone_p99_ms");
                for (String other : others) {
                    assertTrue(
                            figures.containsKey(other),
                            r.scenario + " has no " + other + ": " + figures.keySet());
                }
            }
            if (r.scenario.equals("write")) {
                // every entry point an application uses has its own target (issue 27)
                for (String entry : List.of("Jdbi Handle", "Spring transaction")) {
                    assertTrue(
                            r.checks.stream().anyMatch(c -> c.name().startsWith(entry)),
                            "write has no check for " + entry + ": " + r.checks);
                }
            }
            if (r.scenario.equals("scale-io")) {
                // every setup drained every message it committed, and the outbox is empty
                for (Result.Check c : r.checks) {
                    if (c.name().startsWith("messages committed but not published")
                            || c.name().startsWith("rows left")) {
                        assertEquals(0.0, c.value(), r.scenario + ": " + c.name());
                    }
                }
                assertEquals(0.0, figures.get("rows_left"), "scale-io left rows in its outbox");
                assertTrue(
                        figures.containsKey("keys_400_relays_2_no_membership_msgs_per_s"),
                        "scale-io has no membership-off setup: " + figures.keySet());
            }
        }
        List<String> lines = Files.readAllLines(out);
        assertEquals(Options.SCENARIOS.size(), lines.size(), String.join("\n", lines));
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            assertTrue(line.startsWith("{\"scenario\":\"" + Options.SCENARIOS.get(i) + "\""), line);
            for (String field :
                    List.of(
                            "\"figures\":{",
                            "\"ratio\":",
                            "\"target\":",
                            "\"pass\":",
                            "\"timestamp\":",
                            "\"cores\":",
                            "\"jvm\":",
                            "\"postgresql\":")) {
                assertTrue(line.contains(field), "JSON line lacks " + field + ": " + line);
            }
        }
        assertTrue(
                Files.readString(docs).contains("\nold\n"),
                "a quick run must not rewrite the docs table");
    }

    @Test
    void badArguments_areRejectedWithTheReason() {
        IllegalArgumentException e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        IllegalArgumentException.class, () -> Options.parse("--scenario", "nope"));
        assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
        e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        IllegalArgumentException.class,
                        () -> Options.parse("--drain-messages", "0"));
        assertTrue(e.getMessage().contains("positive"), e.getMessage());
        Options o = Options.parse("--scenario e2e,drain --quick --batch=7");
        assertEquals(List.of("drain", "e2e"), List.copyOf(o.scenarios));
        assertEquals(7, o.size("batch"));
        assertEquals(2000, o.size("drain-messages"));
    }
}
