package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxAdmin;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code outbox} health indicator, when Spring Boot's health support (Actuator) is on the
 * classpath; turned off with {@code management.health.outbox.enabled=false}.
 */
@AutoConfiguration(after = OutboxRelayAutoConfiguration.class)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.health.contributor.HealthIndicator",
            "org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator"
        })
@ConditionalOnBean(OutboxAdmin.class)
@ConditionalOnEnabledHealthIndicator("outbox")
public class OutboxHealthAutoConfiguration {
    /** Creates the configuration; Spring calls it. */
    public OutboxHealthAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(name = "outboxHealthIndicator")
    OutboxHealthIndicator outboxHealthIndicator(
            OutboxAdmin admin, OutboxProperties properties, ObjectProvider<RelayLifecycle> relay) {
        OutboxProperties.Health h = properties.getHealth();
        return new OutboxHealthIndicator(
                new StatisticsReader(
                        admin,
                        Clock.systemUTC(),
                        Checks.notNegative(
                                "health.statistics-cache-ttl", h.getStatisticsCacheTtl())),
                relay.getIfAvailable(),
                Checks.positive("health.max-oldest-ready-age", h.getMaxOldestReadyAge()),
                Checks.positive("health.max-publish-stall", h.getMaxPublishStall()),
                Clock.systemUTC());
    }
}
