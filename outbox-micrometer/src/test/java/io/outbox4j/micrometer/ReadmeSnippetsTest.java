package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.testservices.ReadmeSnippets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
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
}
