package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.engine.RelaySetting;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code outbox} health indicator, when Spring Boot's health support (Actuator) is on the
 * classpath; turned off with {@code management.health.outbox.enabled=false}. With named outboxes
 * ({@code outbox4j.outboxes.<name>.*}) {@code outbox} is a composite with one indicator per name
 * ({@code /actuator/health/outbox/<name>}), each judged alone by the {@code outbox4j.health.*}
 * settings.
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

    /** The one outbox's health. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OutboxConditions.Single.class)
    static class SingleOutboxHealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "outboxHealthIndicator")
        OutboxHealthIndicator outboxHealthIndicator(
                OutboxAdmin admin,
                OutboxProperties properties,
                ObjectProvider<RelayLifecycle> relay) {
            return indicator(admin, properties.getHealth(), relay.getIfAvailable());
        }
    }

    /** One entry per named outbox, under {@code outbox}. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OutboxConditions.Named.class)
    static class NamedOutboxesHealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "outboxHealthContributor")
        CompositeHealthContributor outboxHealthContributor(
                ObjectProvider<NamedOutboxes> outboxes, OutboxProperties properties) {
            NamedOutboxes named = outboxes.getObject();
            Map<String, HealthIndicator> indicators = new LinkedHashMap<>();
            for (String name : named.names()) {
                indicators.put(
                        name,
                        indicator(named.admin(name), properties.getHealth(), named.relay(name)));
            }
            return CompositeHealthContributor.fromMap(indicators);
        }
    }

    static OutboxHealthIndicator indicator(
            OutboxAdmin admin, HealthProperties h, @Nullable RelayLifecycle relay) {
        return new OutboxHealthIndicator(
                new StatisticsReader(
                        admin,
                        Clock.systemUTC(),
                        Checks.notNegative(
                                "health.statistics-cache-ttl", h.getStatisticsCacheTtl())),
                relay,
                Checks.positive("health.max-oldest-ready-age", h.getMaxOldestReadyAge()),
                Checks.setting("health", RelaySetting.MAX_PUBLISH_STALL, h.getMaxPublishStall()),
                Clock.systemUTC());
    }
}
