package io.outbox4j.opentelemetry;

import io.outbox4j.testservices.ReadmeSnippets;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Java snippets of this module's README are copies of tagged regions ({@code // tag::name[]} …
 * {@code // end::name[]}) of its compiled and run test sources, so they cannot rot.
 */
class ReadmeSnippetsTest {
    @Test
    void everyJavaSnippetOfTheReadme_isATaggedRegionOfTestedCode() throws IOException {
        ReadmeSnippets.assertEveryJavaSnippetIsATaggedRegion(
                Path.of("README.md"), List.of(Path.of("src/test/java")));
    }
}
