package io.outbox4j.examples.quickstart;

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
 * The README's Java snippets are copies of tagged regions ({@code // tag::name[]} … {@code //
 * end::name[]}) of the quickstart's compiled sources (or of the tests of the observability modules,
 * which run their examples), so they cannot rot: this test fails when they drift apart.
 */
class ReadmeSnippetsTest {
    private static final Path ROOT = Path.of("../..");
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern TAGGED =
            Pattern.compile(
                    "// tag::([\\w-]+)\\[\\]\\n(.*?)\\n\\s*// end::\\1\\[\\]", Pattern.DOTALL);

    @Test
    void everyJavaSnippetOfTheReadme_isATaggedRegionOfCompiledCode() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"));
        List<String> snippets = new ArrayList<>();
        Matcher m = JAVA_BLOCK.matcher(readme);
        while (m.find()) {
            snippets.add(normalise(m.group(1)));
        }
        List<String> regions = taggedRegions(Path.of("src/main/java"));
        // The ArchUnit rules as the README shows them run in ReadmeArchitectureTest.
        regions.addAll(taggedRegions(Path.of("src/test/java")));
        // The observability modules' examples are tested in their own modules.
        for (String module : List.of("outbox-micrometer", "outbox-opentelemetry")) {
            regions.addAll(taggedRegions(ROOT.resolve(module).resolve("src/test/java")));
        }
        regions.addAll(taggedRegions(ROOT.resolve("examples/spring-boot/src/main/java")));

        assertThat(snippets).as("Java snippets in README.md").isNotEmpty();
        assertThat(regions).as("tagged regions in the quickstart sources").isNotEmpty();
        for (String snippet : snippets) {
            assertThat(regions)
                    .as(
                            "README snippet has no identical tagged region in examples/quickstart:%n%s",
                            snippet)
                    .contains(snippet);
        }
    }

    private static List<String> taggedRegions(Path dir) throws IOException {
        List<String> regions = new ArrayList<>();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f :
                    files.filter(p -> p.toString().endsWith(".java"))
                            .collect(Collectors.toList())) {
                Matcher m = TAGGED.matcher(Files.readString(f));
                while (m.find()) {
                    regions.add(normalise(m.group(2)));
                }
            }
        }
        return regions;
    }

    /**
     * Removes the common indentation and trailing blank lines, so nesting depth does not matter.
     */
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
