package io.outbox4j.benchmarks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report writer puts every peer in one table of the generated docs section (issue 27). */
class ReportTest {
    @TempDir Path dir;

    @Test
    void fullSizeFragments_withPeerCells_giveOneTableWithAColumnPerPeer() throws Exception {
        Path out = dir.resolve("results.jsonl");
        Path docs = dir.resolve("benchmarks.md");
        Files.writeString(docs, "before\n" + Report.START + "\nold\n" + Report.END + "\nafter\n");
        Map<String, Object> machine = Map.of("cores", 2, "commit", "abc");
        Result e2e =
                new Result("e2e", "End to end")
                        .check("relay / hand-written weak loop", 1.2, ">=", 1.0)
                        .peer("e2e: msg/s", Report.WEAK, "36,000")
                        .peer("e2e: msg/s", Report.COMPETENT_2, "88,000")
                        .peer("e2e: msg/s", Report.NAMASTACK, "2,000")
                        .peer("e2e: msg/s", Report.OUTBOX4J, "44,000");
        Result latency =
                new Result("latency", "Latency")
                        .check("outbox4j p99 latency (ms)", 8.0, "<=", 10)
                        .peer("latency p99", Report.GRUELBOX, "5.5")
                        .peer("latency p99", Report.OUTBOX4J, "8.1");
        Report.writeFragment(out, e2e, machine);
        Report.writeFragment(out, latency, machine);
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        Report.updateDocs(out, docs, new PrintStream(said, true, StandardCharsets.UTF_8));

        String text = Files.readString(docs);
        assertTrue(text.contains("| measure | " + String.join(" | ", Report.PEERS) + " |"), text);
        assertTrue(
                text.contains("| e2e: msg/s | 36,000 | — | 88,000 | — | 2,000 | 44,000 |"), text);
        assertTrue(text.contains("| latency p99 | — | — | — | 5.5 | — | 8.1 |"), text);
        assertTrue(text.startsWith("before\n") && text.endsWith("after\n"), text);
    }
}
