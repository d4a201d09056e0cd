package io.outbox4j.benchmarks;

import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one scenario measured: its configuration, its figures, the target checks (the first is the
 * headline ratio) and notes. Printed as a human table and written as one JSON line.
 */
final class Result {
    /** One target: {@code value op threshold}, e.g. {@code 0.86 >= 0.8}. */
    record Check(String name, double value, String op, double threshold) {
        boolean pass() {
            return op.equals(">=") ? value >= threshold : value <= threshold;
        }

        String target() {
            return op + " " + fmt(threshold);
        }
    }

    private record Figure(String key, String label, double value, String unit) {}

    final String scenario;
    final String title;
    final Map<String, Object> config = new LinkedHashMap<>();
    private final List<Figure> figures = new ArrayList<>();
    final List<Check> checks = new ArrayList<>();
    final List<String> notes = new ArrayList<>();

    /**
     * This scenario's cells of the generated peers table ({@link Report#PEERS}): measure → (peer
     * column → cell).
     */
    final Map<String, Map<String, String>> peers = new LinkedHashMap<>();

    String subjectHeadline = "";
    String referenceHeadline = "";

    Result(String scenario, String title) {
        this.scenario = scenario;
        this.title = title;
    }

    Result config(String key, Object value) {
        config.put(key, value);
        return this;
    }

    Result figure(String key, String label, double value, String unit) {
        figures.add(new Figure(key, label, value, unit));
        return this;
    }

    Result check(String name, double value, String op, double threshold) {
        checks.add(new Check(name, value, op, threshold));
        return this;
    }

    /**
     * Sets the one-line summaries for the results table.
     *
     * @param subject what outbox4j achieved
     * @param reference what the baseline (or the comparison point) achieved
     * @return this result
     */
    Result headline(String subject, String reference) {
        this.subjectHeadline = subject;
        this.referenceHeadline = reference;
        return this;
    }

    /**
     * Sets one cell of the peers table.
     *
     * @param measure the row, e.g. {@code e2e: msg/s}
     * @param column one of {@link Report#PEERS}
     * @param cell the text
     * @return this result
     */
    Result peer(String measure, String column, String cell) {
        if (!Report.PEERS.contains(column)) {
            throw new IllegalArgumentException("no peer column " + column);
        }
        peers.computeIfAbsent(measure, k -> new LinkedHashMap<>()).put(column, cell);
        return this;
    }

    List<String[]> figureRows() {
        List<String[]> rows = new ArrayList<>();
        for (Figure f : figures) {
            rows.add(new String[] {f.key(), f.label(), fmt(f.value()), f.unit()});
        }
        return rows;
    }

    Result note(String note) {
        notes.add(note);
        return this;
    }

    Map<String, Double> figures() {
        Map<String, Double> m = new LinkedHashMap<>();
        figures.forEach(f -> m.put(f.key(), f.value()));
        return m;
    }

    boolean pass() {
        return checks.stream().allMatch(Check::pass);
    }

    /**
     * Renders the JSON line.
     *
     * @param machine the machine description
     * @param quick whether the quick sizes were used
     * @return one line of JSON
     */
    String toJson(Map<String, Object> machine, boolean quick) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario);
        m.put("timestamp", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        m.put("quick", quick);
        m.put("figures", figures());
        if (!checks.isEmpty()) {
            Check head = checks.get(0);
            m.put("ratio", head.value());
            m.put("target", head.name() + " " + head.target());
        }
        List<Map<String, Object>> cs = new ArrayList<>();
        for (Check c : checks) {
            Map<String, Object> cm = new LinkedHashMap<>();
            cm.put("name", c.name());
            cm.put("value", c.value());
            cm.put("target", c.target());
            cm.put("pass", c.pass());
            cs.add(cm);
        }
        m.put("checks", cs);
        m.put("pass", pass());
        m.put("config", config);
        m.put("notes", notes);
        m.put("machine", machine);
        return Json.write(m);
    }

    /**
     * Prints the human table of this scenario.
     *
     * @param out where to print
     */
    void print(PrintStream out) {
        out.println();
        out.println("== " + title + " ==");
        out.println("   config: " + config);
        for (Figure f : figures) {
            out.printf(Locale.ROOT, "   %-48s %14s %s%n", f.label(), fmt(f.value()), f.unit());
        }
        for (Check c : checks) {
            out.printf(
                    Locale.ROOT,
                    "   %-48s %14s   target %-8s %s%n",
                    c.name(),
                    fmt(c.value()),
                    c.target(),
                    c.pass() ? "PASS" : "MISS");
        }
        for (String n : notes) {
            out.println("   note: " + n);
        }
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        if (a >= 1000 || (v == Math.rint(v) && a >= 10)) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
