package io.outbox4j.examples.quickstart;

import io.outbox4j.testservices.ReadmeSnippets;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README's Java snippets are copies of tagged regions ({@code // tag::name[]} … {@code //
 * end::name[]}) of the quickstart's compiled sources (or of the tests of the observability modules,
 * which run their examples), so they cannot rot: this test fails when they drift apart.
 */
class ReadmeSnippetsTest {
    private static final Path ROOT = Path.of("../..");

    @Test
    void everyJavaSnippetOfTheReadme_isATaggedRegionOfCompiledCode() throws IOException {
        ReadmeSnippets.assertEveryJavaSnippetIsATaggedRegion(
                ROOT.resolve("README.md"),
                List.of(
                        Path.of("src/main/java"),
                        // the ArchUnit rules as the README shows them run in ReadmeArchitectureTest
                        Path.of("src/test/java"),
                        // the observability modules' examples are tested in their own modules
                        ROOT.resolve("outbox-micrometer/src/test/java"),
                        ROOT.resolve("outbox-opentelemetry/src/test/java"),
                        ROOT.resolve("examples/spring-boot/src/main/java")));
    }
}
