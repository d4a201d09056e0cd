package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Java snippets of this module's README are copies of tagged regions ({@code // tag::name[]} …
 * {@code // end::name[]}) of its compiled and run test sources, so they cannot rot.
 */
class ReadmeSnippetsTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern TAGGED =
            Pattern.compile(
                    "// tag::([\\w-]+)\\[\\]\\n(.*?)\\n\\s*// end::\\1\\[\\]", Pattern.DOTALL);

    @Test
    void everyJavaSnippetOfTheReadme_isATaggedRegionOfTestedCode() throws IOException {
        List<String> snippets = new ArrayList<>();
        Matcher m = JAVA_BLOCK.matcher(Files.readString(Path.of("README.md")));
        while (m.find()) {
            snippets.add(normalise(m.group(1)));
        }
        List<String> regions = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/test/java"))) {
            for (Path f :
                    files.filter(p -> p.toString().endsWith(".java"))
                            .collect(Collectors.toList())) {
                Matcher t = TAGGED.matcher(Files.readString(f));
                while (t.find()) {
                    regions.add(normalise(t.group(2)));
                }
            }
        }
        assertThat(snippets).as("Java snippets in README.md").isNotEmpty();
        for (String snippet : snippets) {
            assertThat(regions)
                    .as(
                            "README snippet has no identical tagged region in src/test/java:%n%s",
                            snippet)
                    .contains(snippet);
        }
    }

    @Test
    void readmeMeterTable_hasARowForEveryMeterName() throws IOException {
        List<String> rows =
                Files.readString(Path.of("README.md"))
                        .lines()
                        .filter(l -> l.startsWith("| `outbox."))
                        .map(l -> l.substring(3, l.indexOf('`', 3)))
                        .collect(Collectors.toList());
        assertThat(rows)
                .as("meter names in the README table")
                .containsExactlyInAnyOrder(
                        OutboxMetrics.DELIVERIES,
                        OutboxMetrics.PUBLISH,
                        OutboxMetrics.LATENCY,
                        OutboxMetrics.STORE_ERRORS,
                        OutboxMetrics.STORE_CALLS,
                        OutboxMetrics.STORE_MESSAGES,
                        OutboxMetrics.RELAY_STATE,
                        OutboxMetrics.RELAY_BUCKETS,
                        OutboxMetrics.RELAY_MEMBERS,
                        OutboxMetrics.RELAY_HANDOVERS,
                        OutboxMetrics.RELAY_LAST_CLAIM_AGE,
                        OutboxMetrics.RELAY_PUBLISH_FAILED_CALLS,
                        OutboxMetrics.RELAY_PUBLISH_STALLED,
                        OutboxMetrics.RELAY_OLDEST_CALL_AGE,
                        OutboxMetrics.MESSAGES,
                        OutboxMetrics.OLDEST_READY_AGE,
                        OutboxMetrics.BLOCKED_KEYS,
                        OutboxMetrics.STATISTICS_ERRORS,
                        OutboxObservations.NAME);
    }

    /** Removes the common indentation and trailing blank lines. */
    private static String normalise(String code) {
        List<String> lines = new ArrayList<>(List.of(code.split("\\n", -1)));
        while (!lines.isEmpty() && lines.get(lines.size() - 1).isBlank()) {
            lines.remove(lines.size() - 1);
        }
        int indent =
                lines.stream()
                        .filter(l -> !l.isBlank())
                        .mapToInt(l -> l.length() - l.stripLeading().length())
                        .min()
                        .orElse(0);
        return lines.stream()
                .map(l -> l.isBlank() ? "" : l.substring(indent))
                .collect(Collectors.joining("\n"));
    }
}
