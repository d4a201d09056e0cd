package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The example alerts and dashboard in {@code docs/} query only series that a Prometheus registry
 * really exports for these meters, and the README's Prometheus column names them right.
 */
class PrometheusDocsTest {
    private static final Pattern SERIES = Pattern.compile("\\boutbox_[a-z_]+");

    @Test
    void alertsDashboardAndReadme_nameOnlySeriesThePrometheusRegistryExports() throws IOException {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        store.enqueueCommitted(List.of(Orders.order("m1").build()));
        try (OutboxMetrics metrics =
                OutboxMetrics.builder(registry)
                        .admin(store)
                        .statisticsInterval(Duration.ZERO)
                        .build()) {
            metrics.onDelivery(
                    new Observation(
                            "m0",
                            Optional.empty(),
                            "orders",
                            "shop",
                            Instant.now().minusMillis(20),
                            1,
                            Duration.ofMillis(3),
                            Observation.Outcome.COMPLETED,
                            Optional.empty(),
                            false));
            metrics.onStoreError(new IllegalStateException("down"));
            Relay relay =
                    Relay.builder(metrics.store(store), Publisher.perMessage(m -> {})).build();
            metrics.relay(relay);
            relay.runOnce();
            relay.close();
            Set<String> exported = new TreeSet<>();
            registry.scrape()
                    .lines()
                    .filter(l -> !l.startsWith("#") && !l.isBlank())
                    .forEach(l -> exported.add(l.split("[{ ]", 2)[0]));

            for (Path doc :
                    List.of(
                            Path.of("../docs/prometheus-alerts.yml"),
                            Path.of("../docs/grafana-outbox4j.json"),
                            Path.of("README.md"))) {
                Set<String> named = new TreeSet<>();
                Matcher m = SERIES.matcher(Files.readString(doc));
                while (m.find()) {
                    named.add(m.group());
                }
                named.removeIf(n -> n.endsWith("_")); // README: "outbox_send_seconds_…"
                assertThat(named).as("series named in %s", doc).isNotEmpty();
                assertThat(exported).as("series exported, against %s", doc).containsAll(named);
            }
        }
    }
}
