package io.outbox4j.faulttests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The machine-readable figures of the fault drills: one JSON object per scenario in {@code
 * target/fault-figures.json} of this module (not standard output), rewritten after each scenario of
 * the run so a scenario that fails still leaves its figures.
 */
public final class FaultFigures {
    /** The file name under the module's {@code target} directory. */
    public static final String FILE_NAME = "fault-figures.json";

    private static final Map<String, Object> SCENARIOS = new LinkedHashMap<>();

    private FaultFigures() {}

    /**
     * Returns where the figures are written: {@code ${basedir}/target/fault-figures.json} (Maven
     * Surefire sets {@code basedir}), else {@code target/fault-figures.json} of the working
     * directory.
     *
     * @return the file
     */
    public static Path file() {
        return Path.of(System.getProperty("basedir", "."), "target", FILE_NAME);
    }

    /**
     * Adds (or replaces) the figures of one scenario and rewrites the file.
     *
     * @param scenario the scenario name
     * @param figures its figures: strings, numbers, booleans, nulls, lists and maps of those
     * @return the file written
     */
    public static synchronized Path record(String scenario, Map<String, Object> figures) {
        SCENARIOS.put(scenario, new LinkedHashMap<>(figures));
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("updatedAt", Instant.now().toString());
        root.put("availableProcessors", Runtime.getRuntime().availableProcessors());
        root.put("java", System.getProperty("java.version"));
        root.put("scenarios", SCENARIOS);
        Path file = file();
        try {
            Files.createDirectories(file.getParent());
            Path tmp = file.resolveSibling(FILE_NAME + ".tmp");
            Files.writeString(tmp, Json.write(root), StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
        return file;
    }
}
