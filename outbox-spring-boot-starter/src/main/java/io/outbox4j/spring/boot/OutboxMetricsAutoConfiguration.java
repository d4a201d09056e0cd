package io.outbox4j.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.micrometer.OutboxMetrics;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer meters for outbox4j when the application has Micrometer ({@code outbox-micrometer} and
 * a {@link MeterRegistry} bean, as Actuator provides): an {@link OutboxMetrics} that is the relay's
 * observer (deliveries, publish timer, latency, store errors), reads the backlog through the
 * store's admin port (every 30 s, on a daemon thread) and binds each relay the starter starts
 * (state, last claim, publishing). Turned off with {@code outbox4j.metrics.enabled=false}; an
 * {@code OutboxMetrics} bean of the application's own wins.
 */
@AutoConfiguration(
        before = OutboxRelayAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
        })
@ConditionalOnClass(
        name = {
            "io.outbox4j.micrometer.OutboxMetrics",
            "io.micrometer.core.instrument.MeterRegistry"
        })
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "outbox4j.metrics.enabled", matchIfMissing = true)
public class OutboxMetricsAutoConfiguration {
    /** Creates the configuration; Spring calls it. */
    public OutboxMetricsAutoConfiguration() {}

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    OutboxMetrics outboxMetrics(MeterRegistry registry, ObjectProvider<OutboxAdmin> admin) {
        OutboxMetrics.Builder b = OutboxMetrics.builder(registry);
        OutboxAdmin a = admin.getIfUnique();
        if (a != null) {
            b.admin(a);
        }
        return b.build();
    }

    @Bean
    RelayListener outboxMetricsRelayBinder(OutboxMetrics metrics) {
        return metrics::relay;
    }
}
