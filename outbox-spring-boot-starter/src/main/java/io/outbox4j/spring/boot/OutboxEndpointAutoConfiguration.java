package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxAdmin;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code outbox} Actuator endpoint ({@link OutboxEndpoint}, or {@link OutboxesEndpoint} with
 * named outboxes), when Actuator is on the classpath and the endpoint is available ({@code
 * management.endpoints.web.exposure.include=outbox} for HTTP).
 */
@AutoConfiguration(after = OutboxRelayAutoConfiguration.class)
@ConditionalOnClass(
        name = {
            "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
            "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
        })
@ConditionalOnBean(OutboxAdmin.class)
@ConditionalOnAvailableEndpoint(OutboxEndpoint.class)
public class OutboxEndpointAutoConfiguration {
    /** Creates the configuration; Spring calls it. */
    public OutboxEndpointAutoConfiguration() {}

    /** The one outbox's endpoint. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OutboxConditions.Single.class)
    static class SingleOutboxEndpointConfiguration {
        @Bean
        @ConditionalOnMissingBean
        OutboxEndpoint outboxEndpoint(OutboxAdmin admin) {
            return new OutboxEndpoint(admin, Clock.systemUTC());
        }
    }

    /** The endpoint over the named outboxes. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OutboxConditions.Named.class)
    static class NamedOutboxesEndpointConfiguration {
        @Bean
        @ConditionalOnMissingBean
        OutboxesEndpoint outboxEndpoint(ObjectProvider<NamedOutboxes> outboxes) {
            return OutboxesEndpoint.of(outboxes.getObject(), Clock.systemUTC());
        }
    }
}
