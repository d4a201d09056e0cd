package io.outbox4j.testservices;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Keeps a README's Java snippets true: each must be a copy of a tagged region ({@code //
 * tag::name[]} … {@code // end::name[]}) of sources that are compiled and run, so a snippet cannot
 * rot without a test failing.
 */
public final class ReadmeSnippets {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern TAGGED =
            Pattern.compile(
                    "// tag::([\\w-]+)\\[\\]\\n(.*?)\\n\\s*// end::\\1\\[\\]", Pattern.DOTALL);

    private ReadmeSnippets() {}

    /**
     * Asserts that the README has Java snippets and that each is, up to indentation, a tagged
     * region of a {@code .java} file below one of {@code sources}.
     *
     * @param readme the README
     * @param sources the source directories whose tagged regions the snippets copy
     * @throws IOException if a file cannot be read
     */
    public static void assertEveryJavaSnippetIsATaggedRegion(Path readme, List<Path> sources)
            throws IOException {
        List<String> snippets = new ArrayList<>();
        Matcher m = JAVA_BLOCK.matcher(Files.readString(readme));
        while (m.find()) {
            snippets.add(normalise(m.group(1)));
        }
        if (snippets.isEmpty()) {
            fail("no Java snippets in " + readme);
        }
        List<String> regions = new ArrayList<>();
        for (Path dir : sources) {
            regions.addAll(taggedRegions(dir));
        }
        if (regions.isEmpty()) {
            fail("no tagged regions in " + sources);
        }
        for (String snippet : snippets) {
            if (!regions.contains(snippet)) {
                fail(
                        readme
                                + ": a snippet has no identical tagged region in "
                                + sources
                                + ":\n"
                                + snippet);
            }
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

    /** Removes the common indentation and trailing blank lines: nesting depth does not matter. */
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
