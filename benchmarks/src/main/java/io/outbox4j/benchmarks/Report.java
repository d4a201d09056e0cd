package io.outbox4j.benchmarks;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Writes the results: one JSON line per scenario appended to the results file, and, for full-size
 * runs, the latest Markdown fragment of each scenario ({@code results/latest/<scenario>.md}) from
 * which the results table of {@code docs/benchmarks.md} is regenerated between its markers.
 */
final class Report {
    static final String START = "<!-- benchmarks:results:start -->";
    static final String END = "<!-- benchmarks:results:end -->";
    private static final String HEADER =
            """
            | scenario | outbox4j | baseline | measured | target | verdict |
            |---|---|---|---|---|---|
            """;

    /** Peer column: the weak hand-written loop (and, in {@code latency}, the 10 ms poller). */
    static final String WEAK = "hand-written, weak (batch 100, 1 thread)";

    /** Peer column: the competent hand-written relay with one worker. */
    static final String COMPETENT_1 = "hand-written, competent (batch 500, 1 worker)";

    /** Peer column: the competent hand-written relay with two workers sharing one producer. */
    static final String COMPETENT_2 = "hand-written, competent (batch 500, 2 workers)";

    /** Peer column: gruelbox transaction-outbox. */
    static final String GRUELBOX = "gruelbox 4.2.268";

    /** Peer column: namastack-outbox. */
    static final String NAMASTACK = "namastack-outbox " + Namastack.VERSION;

    /** Peer column: outbox4j. */
    static final String OUTBOX4J = "outbox4j (engine defaults)";

    /** The columns of the generated peers table, in order (issue 27): every side measured. */
    static final List<String> PEERS =
            List.of(WEAK, COMPETENT_1, COMPETENT_2, GRUELBOX, NAMASTACK, OUTBOX4J);

    private Report() {}

    static void appendJson(Path file, String json) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Files.writeString(
                    file,
                    json + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + file, e);
        }
    }

    static String machineLine(Map<String, Object> m) {
        return m.get("cores")
                + " cores ("
                + m.get("cpu")
                + "), "
                + m.get("memory_gib")
                + " GiB RAM, "
                + m.get("jvm")
                + " (max heap "
                + m.get("max_heap_mib")
                + " MiB), PostgreSQL "
                + m.get("postgresql")
                + " ("
                + m.get("postgresql_settings")
                + ")";
    }

    static String runLine(Map<String, Object> m, Result r) {
        return Instant.now().truncatedTo(ChronoUnit.MINUTES)
                + ", commit "
                + m.get("commit")
                + ", "
                + r.config.get("seconds")
                + " s, load average "
                + m.get("load_average_at_start")
                + " at the start of the"
                + " run, "
                + r.config.get("load_average_at_end")
                + " at the end of the scenario"
                + ("not started".equals(m.get("kafka"))
                        ? ""
                        : "; Kafka: "
                                + String.valueOf(m.get("kafka"))
                                        .replaceAll(" at \\S+ \\(data in [^)]*\\)", ""));
    }

    static String row(Result r) {
        String measured =
                r.checks.stream()
                        .map(c -> c.name() + " = " + Result.fmt(c.value()))
                        .collect(Collectors.joining("<br>"));
        String target =
                r.checks.stream()
                        .map(c -> c.target().replace(">=", "≥").replace("<=", "≤"))
                        .collect(Collectors.joining("<br>"));
        String verdict =
                r.checks.stream()
                        .map(c -> c.pass() ? "met" : "**missed**")
                        .collect(Collectors.joining("<br>"));
        return "| "
                + r.scenario
                + " | "
                + r.subjectHeadline
                + " | "
                + r.referenceHeadline
                + " | "
                + measured
                + " | "
                + target
                + " | "
                + verdict
                + " |";
    }

    static String details(Result r) {
        StringBuilder b = new StringBuilder("#### " + r.scenario + ": " + r.title + "\n\n");
        b.append("Configuration: `").append(Json.write(r.config)).append("`\n\n");
        b.append("| figure | value | unit |\n|---|---:|---|\n");
        for (String[] f : r.figureRows()) {
            b.append("| ")
                    .append(f[1])
                    .append(" | ")
                    .append(f[2])
                    .append(" | ")
                    .append(f[3])
                    .append(" |\n");
        }
        for (Result.Check c : r.checks) {
            b.append("| **")
                    .append(c.name())
                    .append("** (target ")
                    .append(c.target())
                    .append(") | ")
                    .append(Result.fmt(c.value()))
                    .append(" | ")
                    .append(c.pass() ? "met" : "**missed**")
                    .append(" |\n");
        }
        for (String note : r.notes) {
            b.append("\n- ").append(note.replace("|", "\\|"));
        }
        if (!r.notes.isEmpty()) {
            b.append('\n');
        }
        return b.toString();
    }

    /**
     * Writes {@code latest/<scenario>.md} beside the results file: the table row, machine, run, the
     * details.
     */
    static void writeFragment(Path resultsFile, Result r, Map<String, Object> machine) {
        Path dir = resultsFile.toAbsolutePath().getParent().resolve("latest");
        String text =
                row(r)
                        + "\n"
                        + machineLine(machine)
                        + "\n"
                        + runLine(machine, r)
                        + "\n"
                        + details(r);
        StringBuilder peers = new StringBuilder();
        r.peers.forEach(
                (measure, cells) ->
                        cells.forEach(
                                (column, cell) ->
                                        peers.append(measure)
                                                .append('\t')
                                                .append(column)
                                                .append('\t')
                                                .append(cell)
                                                .append('\n')));
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve(r.scenario + ".md"), text, StandardCharsets.UTF_8);
            Path peersFile = dir.resolve(r.scenario + ".peers.tsv");
            if (peers.length() > 0) {
                Files.writeString(peersFile, peers.toString(), StandardCharsets.UTF_8);
            } else {
                Files.deleteIfExists(peersFile);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir, e);
        }
    }

    /** Assembles the results section from the fragments present, in the scenario order. */
    static String section(Path resultsFile) throws IOException {
        Path dir = resultsFile.toAbsolutePath().getParent().resolve("latest");
        List<String> rows = new ArrayList<>();
        Set<String> machines = new LinkedHashSet<>();
        Set<String> runs = new LinkedHashSet<>();
        StringBuilder details = new StringBuilder();
        for (String s : Options.SCENARIOS) {
            Path f = dir.resolve(s + ".md");
            if (!Files.exists(f)) {
                continue;
            }
            List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
            rows.add(lines.get(0));
            machines.add(lines.get(1));
            runs.add(s + ": " + lines.get(2));
            details.append('\n')
                    .append(String.join("\n", lines.subList(3, lines.size())))
                    .append('\n');
        }
        StringBuilder b = new StringBuilder();
        b.append(
                "_Generated by `Benchmarks` from the latest full-size run of each scenario"
                        + " (`benchmarks/results/latest/`); do not edit by hand._\n\n");
        b.append(HEADER);
        rows.forEach(r -> b.append(r).append('\n'));
        b.append(peersTable(dir));
        b.append("\nMachine: ");
        b.append(String.join("; or ", machines)).append('\n');
        b.append("\nRuns:\n\n");
        runs.forEach(r -> b.append("- ").append(r).append('\n'));
        b.append(details);
        return b.toString();
    }

    /**
     * The peers table: one column per side ({@link #PEERS}), one row per measure, from the {@code
     * <scenario>.peers.tsv} files the latest full-size runs left (measure, column, cell per line).
     *
     * @param dir the {@code latest/} folder
     * @return the table with its heading, or nothing when no scenario has peers
     */
    static String peersTable(Path dir) throws IOException {
        Map<String, Map<String, String>> measures = new LinkedHashMap<>();
        for (String s : Options.SCENARIOS) {
            Path f = dir.resolve(s + ".peers.tsv");
            if (!Files.exists(f)) {
                continue;
            }
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                String[] cell = line.split("\t", 3);
                if (cell.length == 3) {
                    measures.computeIfAbsent(cell[0], k -> new LinkedHashMap<>())
                            .put(cell[1], cell[2]);
                }
            }
        }
        if (measures.isEmpty()) {
            return "";
        }
        StringBuilder b =
                new StringBuilder(
                        "\n**Every peer side by side** (same runs as above; — = not measured in"
                                + " that scenario):\n\n| measure | ");
        b.append(String.join(" | ", PEERS)).append(" |\n|---|");
        b.append("---:|".repeat(PEERS.size())).append('\n');
        measures.forEach(
                (measure, cells) -> {
                    b.append("| ").append(measure);
                    for (String column : PEERS) {
                        b.append(" | ").append(cells.getOrDefault(column, "—"));
                    }
                    b.append(" |\n");
                });
        return b.toString();
    }

    /**
     * Replaces the text between the markers of the docs file with the current results section.
     *
     * @param resultsFile the JSON results file (its folder holds {@code latest/})
     * @param docs the Markdown file
     * @param out where to say what happened
     */
    static void updateDocs(Path resultsFile, Path docs, PrintStream out) {
        try {
            if (!Files.exists(docs)) {
                out.println("(no " + docs + " to update)");
                return;
            }
            String text = Files.readString(docs, StandardCharsets.UTF_8);
            int start = text.indexOf(START);
            int end = text.indexOf(END);
            if (start < 0 || end < start) {
                out.println(
                        "(" + docs + " has no " + START + " ... " + END + " markers; not updated)");
                return;
            }
            String updated =
                    text.substring(0, start + START.length())
                            + "\n"
                            + section(resultsFile)
                            + "\n"
                            + text.substring(end);
            Files.writeString(docs, updated, StandardCharsets.UTF_8);
            out.println("updated the results table in " + docs.toAbsolutePath().normalize());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot update " + docs, e);
        }
    }

    static void summary(List<Result> results, PrintStream out) {
        out.println();
        out.println("== summary ==");
        out.printf(
                Locale.ROOT,
                "%-9s %-44s %-12s %-10s %s%n",
                "scenario",
                "check",
                "measured",
                "target",
                "verdict");
        for (Result r : results) {
            for (Result.Check c : r.checks) {
                out.printf(
                        Locale.ROOT,
                        "%-9s %-44s %-12s %-10s %s%n",
                        r.scenario,
                        c.name(),
                        Result.fmt(c.value()),
                        c.target(),
                        c.pass() ? "PASS" : "MISS");
            }
        }
    }
}
