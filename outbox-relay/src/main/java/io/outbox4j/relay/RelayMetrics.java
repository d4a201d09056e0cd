package io.outbox4j.relay;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.micrometer.OutboxMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;

/**
 * The relay's meters: outbox-micrometer's ({@link OutboxMetrics}, the same {@code outbox_*} meters
 * as an application's, so the shipped Grafana dashboard and Prometheus alerts work for every
 * deployment), in a Prometheus registry of their own that {@code GET /metrics} renders.
 */
final class RelayMetrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry =
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final OutboxMetrics metrics;

    /**
     * @param admin the store's admin side, read for the backlog gauges when {@code statistics}
     * @param statistics whether to read the store's statistics (metrics.store-statistics)
     * @param interval how often they are read (metrics.statistics-interval), on a thread of the
     *     binder's own, never per scrape
     */
    RelayMetrics(OutboxAdmin admin, boolean statistics, Duration interval, Clock clock) {
        OutboxMetrics.Builder b =
                OutboxMetrics.builder(registry).statisticsInterval(interval).clock(clock);
        if (statistics) {
            b.admin(admin);
        }
        this.metrics = b.build();
    }

    /** The binder: the relay's observer, its store's timer and its state's gauges. */
    OutboxMetrics binder() {
        return metrics;
    }

    /** The Prometheus text exposition of every meter. */
    String render() {
        return registry.scrape();
    }

    /** How many messages, over all topics, ended with this outcome since the start. */
    long count(io.outbox4j.api.Observation.Outcome outcome) {
        return (long)
                registry
                        .find(OutboxMetrics.DELIVERIES)
                        .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                        .counters()
                        .stream()
                        .mapToDouble(Counter::count)
                        .sum();
    }

    @Override
    public void close() {
        metrics.close();
        registry.close();
    }
}
