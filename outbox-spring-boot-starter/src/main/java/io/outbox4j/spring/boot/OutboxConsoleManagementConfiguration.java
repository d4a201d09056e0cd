package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.console.OutboxConsole;
import io.outbox4j.engine.Relay;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.ManagementContextType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The web console ({@code outbox4j.console.enabled=true}) on the management server: under the
 * Actuator base path ({@code /actuator/outbox-console/}), on the management port when it has its
 * own. Write actions and payloads need Spring Security: the operator is the request's authenticated
 * user, and the application's security configuration decides who reaches the path.
 */
@ManagementContextConfiguration(value = ManagementContextType.ANY, proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(
        name = {
            "jakarta.servlet.http.HttpServlet",
            "org.springframework.boot.web.servlet.ServletRegistrationBean"
        })
@ConditionalOnBooleanProperty(name = "outbox4j.console.enabled")
class OutboxConsoleManagementConfiguration {
    /** The console's path below the Actuator base path. */
    static final String PATH = "/outbox-console";

    /** The class whose presence means Spring Security authenticates the requests. */
    static final String SPRING_SECURITY = "org.springframework.security.web.SecurityFilterChain";

    @Bean
    ServletRegistrationBean<ConsoleServlet> outboxConsoleServlet(
            Environment environment,
            ObjectProvider<WebEndpointProperties> endpoints,
            ObjectProvider<OutboxAdmin> admin,
            ObjectProvider<RelayLifecycle> relay,
            ObjectProvider<NamedOutboxes> named) {
        ConsoleProperties settings =
                Binder.get(environment)
                        .bind(OutboxProperties.PREFIX + ".console", ConsoleProperties.class)
                        .orElseGet(ConsoleProperties::new);
        boolean security =
                ClassUtils.isPresent(
                        SPRING_SECURITY,
                        OutboxConsoleManagementConfiguration.class.getClassLoader());
        Map<String, OutboxConsole> consoles = new LinkedHashMap<>();
        NamedOutboxes outboxes = named.getIfAvailable();
        if (outboxes != null) {
            for (String name : outboxes.names()) {
                consoles.put(
                        name,
                        console(
                                outboxes.admin(name),
                                outboxes.relay(name),
                                settings,
                                security,
                                "outbox " + name));
            }
        } else {
            OutboxAdmin single = admin.getIfAvailable();
            if (single == null) {
                throw new IllegalStateException(
                        "outbox4j.console.enabled=true but the application has no outbox (no OutboxAdmin bean)");
            }
            consoles.put(
                    "", console(single, relay.getIfAvailable(), settings, security, "outbox4j"));
        }
        WebEndpointProperties web = endpoints.getIfAvailable(WebEndpointProperties::new);
        String base = web.getBasePath().equals("/") ? "" : web.getBasePath();
        ServletRegistrationBean<ConsoleServlet> bean =
                new ServletRegistrationBean<>(
                        new ConsoleServlet(consoles, security), base + PATH, base + PATH + "/*");
        bean.setName("outboxConsole");
        return bean;
    }

    static OutboxConsole console(
            OutboxAdmin admin,
            @Nullable RelayLifecycle relay,
            ConsoleProperties settings,
            boolean security,
            String title) {
        if ((settings.isWriteEnabled() || settings.isPayloadsEnabled()) && !security) {
            throw new IllegalStateException(
                    "outbox4j.console."
                            + (settings.isWriteEnabled() ? "write-enabled" : "payloads-enabled")
                            + "=true needs Spring Security (spring-boot-starter-security): the console"
                            + " never writes nor shows payloads to an unauthenticated user");
        }
        OutboxConsole.Builder b =
                OutboxConsole.builder(admin)
                        .title(title)
                        .pageSize(settings.getPageSize())
                        .writeEnabled(settings.isWriteEnabled())
                        .payloadsEnabled(settings.isPayloadsEnabled())
                        .membership(admin instanceof OutboxMembership m ? m : null);
        if (security) {
            b.hostAuthentication();
        }
        if (relay != null) {
            b.relays(() -> List.of(status(relay)));
        }
        return b.build();
    }

    private static OutboxConsole.RelayStatus status(RelayLifecycle lifecycle) {
        Relay r = lifecycle.relay();
        if (r == null) {
            return new OutboxConsole.RelayStatus("this application", "STOPPED", Map.of());
        }
        Instant now = Instant.now();
        Map<String, String> details = new LinkedHashMap<>();
        details.put(
                "last claim",
                r.lastClaim()
                        .map(t -> Duration.between(t, now).toMillis() + " ms ago")
                        .orElse("none yet"));
        Relay.Publishing p = r.publishing();
        details.put(
                "publishing",
                p.stalledFor(now).map(d -> "stalled for " + d.toSeconds() + " s").orElse("ok"));
        r.membership()
                .ifPresent(
                        m -> {
                            details.put("buckets", Integer.toString(m.buckets().size()));
                            details.put("members", String.join(", ", m.members()));
                        });
        String name = r.membership().map(m -> m.member()).orElse("this application");
        return new OutboxConsole.RelayStatus(name, r.state().name(), details);
    }
}
