package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxAdmin;
import java.time.Clock;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code outbox} Actuator endpoint ({@link OutboxEndpoint}), when Actuator is on the classpath
 * and the endpoint is available ({@code management.endpoints.web.exposure.include=outbox} for
 * HTTP). Micrometer metrics are not bound yet.
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

    @Bean
    @ConditionalOnMissingBean
    OutboxEndpoint outboxEndpoint(OutboxAdmin admin) {
        return new OutboxEndpoint(admin, Clock.systemUTC());
    }
}
