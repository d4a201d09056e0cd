package io.outbox4j.spring.boot.modulith;

import io.outbox4j.api.Message;
import io.outbox4j.spring.boot.OutboxProperties;
import io.outbox4j.spring.boot.OutboxRelayAutoConfiguration;
import io.outbox4j.spring.boot.TransactionalOutbox;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.BeanFactoryAnnotationUtils;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.core.env.Environment;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.json.JsonMapper;

/**
 * Makes outbox4j the engine behind Spring Modulith's event externalization (Modulith 2.0 and 2.1):
 * every event its {@code EventExternalizationConfiguration} selects (by default those annotated
 * with {@code @Externalized}) is enqueued in the publishing transaction and published by outbox4j's
 * relay. The default configuration bean comes with Modulith's starters ({@code
 * spring-modulith-events-core}); with {@code spring-modulith-events-api} alone, declare one ({@code
 * EventExternalizationConfiguration.defaults("com.acme").build()}).
 *
 * <p>Use it instead of Modulith's own broker modules ({@code spring-modulith-events-kafka}, {@code
 * -amqp}, {@code -jms}, {@code -messaging}), which would publish the same events a second time
 * after the commit: startup fails when one of them is present (2.0's {@code
 * DelegatingEventExternalizer}, 2.1's {@code EventExternalizerModuleListener}, {@code
 * OutboxEventExternalizer} or a broker's {@code EventExternalizationTransport}), and when {@code
 * spring.modulith.events.externalization.mode} is {@code outbox}. Turned off with {@code
 * outbox4j.modulith.enabled=false}.
 *
 * <p>With several named outboxes ({@code outbox4j.outboxes.<name>.*}) the events go to the one
 * {@code outbox4j.modulith.outbox} names, else to the one marked {@code primary}; with neither the
 * start stops, listing the outboxes.
 */
@AutoConfiguration(
        after = OutboxRelayAutoConfiguration.class,
        afterName =
                "org.springframework.modulith.events.config.EventExternalizationAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.modulith.events.EventExternalizationConfiguration")
@ConditionalOnBean(
        type = {
            "org.springframework.modulith.events.EventExternalizationConfiguration",
            "io.outbox4j.spring.boot.TransactionalOutbox"
        })
@ConditionalOnBooleanProperty(name = "outbox4j.modulith.enabled", matchIfMissing = true)
public class OutboxModulithAutoConfiguration {
    /**
     * Beans through which Spring Modulith externalizes events itself: 2.0 registers a {@code
     * DelegatingEventExternalizer} per broker module (deprecated in 2.1); 2.1 registers an {@code
     * EventExternalizerModuleListener} (mode {@code module-listener}, the default) or an {@code
     * OutboxEventExternalizer} (mode {@code outbox}) over an {@code EventExternalizationTransport}
     * that each broker module contributes. Any of them beside outbox4j publishes every event twice.
     */
    static final List<String> MODULITH_EXTERNALIZERS =
            List.of(
                    "org.springframework.modulith.events.support.DelegatingEventExternalizer",
                    "org.springframework.modulith.events.support.EventExternalizerModuleListener",
                    "org.springframework.modulith.events.support.OutboxEventExternalizer",
                    "org.springframework.modulith.events.support.EventExternalizationTransport");

    /**
     * Spring Modulith 2.1's choice of externalization: {@code module-listener} or {@code outbox}.
     */
    static final String MODULITH_MODE = "spring.modulith.events.externalization.mode";

    /** With several named outboxes: the one externalized events go to. */
    static final String OUTBOX_PROPERTY = "outbox4j.modulith.outbox";

    /** Creates the configuration; Spring calls it. */
    public OutboxModulithAutoConfiguration() {}

    /** JSON through the application's Jackson 3 {@code JsonMapper}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "tools.jackson.databind.json.JsonMapper")
    static class JacksonSerializerConfiguration {
        @Bean
        @ConditionalOnMissingBean
        ExternalizedEventSerializer outboxExternalizedEventSerializer(
                ObjectProvider<JsonMapper> mappers) {
            JsonMapper mapper = mappers.getIfAvailable(() -> JsonMapper.builder().build());
            return (event, message) -> {
                if (!plain(event, message)) {
                    message.contentType("application/json")
                            .payload(mapper.writeValueAsBytes(event));
                }
            };
        }
    }

    /** Without Jackson: text and bytes only. */
    @Bean
    @ConditionalOnMissingBean
    ExternalizedEventSerializer outboxExternalizedEventSerializer() {
        return (event, message) -> {
            if (!plain(event, message)) {
                throw new IllegalStateException(
                        "outbox4j: cannot serialize an externalized "
                                + event.getClass().getName()
                                + " without Jackson; add tools.jackson.core:jackson-databind, map the event"
                                + " to a String or byte[], or declare an ExternalizedEventSerializer bean");
            }
        };
    }

    @Bean
    ExternalizedEventRecorder outboxExternalizedEventRecorder(
            EventExternalizationConfiguration configuration,
            ObjectProvider<TransactionalOutbox> outboxes,
            ExternalizedEventSerializer serializer,
            ListableBeanFactory beans,
            BeanFactory beanFactory,
            OutboxProperties properties,
            Environment environment) {
        refuseModulithExternalizers(beans, environment);
        TransactionalOutbox outbox = chooseOutbox(outboxes, beanFactory, beans, properties);
        StandardEvaluationContext evaluation = new StandardEvaluationContext();
        evaluation.setBeanResolver(new BeanFactoryResolver(beanFactory));
        String module = properties.getModulith().getModule();
        if (module == null || module.isBlank()) {
            module = environment.getProperty("spring.application.name", "application");
        }
        return new ExternalizedEventRecorder(
                configuration, outbox, serializer, evaluation, module.strip());
    }

    /**
     * The outbox externalized events go to: the named outbox {@value #OUTBOX_PROPERTY} names; else
     * the only {@link TransactionalOutbox}, or the primary one. With several and none chosen the
     * start stops, naming them.
     */
    static TransactionalOutbox chooseOutbox(
            ObjectProvider<TransactionalOutbox> outboxes,
            BeanFactory beanFactory,
            ListableBeanFactory beans,
            OutboxProperties properties) {
        Set<String> named = properties.getOutboxes().keySet();
        String chosen = properties.getModulith().getOutbox();
        if (chosen != null && !chosen.isBlank()) {
            chosen = chosen.strip();
            if (!named.contains(chosen)) {
                throw new InvalidConfigurationPropertyValueException(
                        OUTBOX_PROPERTY,
                        chosen,
                        named.isEmpty()
                                ? "names an outbox, but the application has no named outboxes"
                                        + " (outbox4j.outboxes.<name>.*); remove it"
                                : "names no outbox; the outboxes are " + named);
            }
            try {
                return BeanFactoryAnnotationUtils.qualifiedBeanOfType(
                        beanFactory, TransactionalOutbox.class, chosen);
            } catch (NoSuchBeanDefinitionException e) {
                throw new InvalidConfigurationPropertyValueException(
                        OUTBOX_PROPERTY,
                        chosen,
                        "names an outbox without a TransactionalOutbox (a MongoDB outbox);"
                                + " externalized events need a JDBC one: "
                                + jdbcOutboxes(beans));
            }
        }
        TransactionalOutbox only = outboxes.getIfUnique();
        if (only != null) {
            return only;
        }
        throw new InvalidConfigurationPropertyValueException(
                OUTBOX_PROPERTY,
                null,
                "must name the outbox Spring Modulith's externalized events go to, as the"
                        + " application has several "
                        + jdbcOutboxes(beans)
                        + " and none is primary; set it, or mark one"
                        + " outbox4j.outboxes.<name>.primary=true (or outbox4j.modulith.enabled=false)");
    }

    /** The outboxes that can take events: each TransactionalOutbox's qualifier or bean name. */
    private static List<String> jdbcOutboxes(ListableBeanFactory beans) {
        List<String> out = new ArrayList<>();
        for (String name : beans.getBeanNamesForType(TransactionalOutbox.class)) {
            String suffix = "TransactionalOutbox";
            out.add(
                    name.endsWith(suffix) && name.length() > suffix.length()
                            ? name.substring(0, name.length() - suffix.length())
                            : name);
        }
        return out;
    }

    /**
     * Stops the start when Spring Modulith would externalize the same events itself: a bean of one
     * of {@link #MODULITH_EXTERNALIZERS} (a broker module such as {@code
     * spring-modulith-events-kafka}, 2.0 or 2.1 style), or {@value #MODULITH_MODE} set to {@code
     * outbox} (Modulith's own outbox integrations).
     */
    static void refuseModulithExternalizers(ListableBeanFactory beans, Environment environment) {
        String mode = environment.getProperty(MODULITH_MODE);
        if (mode != null && !mode.isBlank() && !isModuleListener(mode)) {
            throw new IllegalStateException(
                    "outbox4j: "
                            + MODULITH_MODE
                            + "="
                            + mode.strip()
                            + " hands @Externalized events to Spring Modulith's own outbox"
                            + " externalization, which would publish them a second time beside"
                            + " outbox4j; remove the property, or set outbox4j.modulith.enabled=false"
                            + " to leave externalization to Modulith");
        }
        ClassLoader loader = OutboxModulithAutoConfiguration.class.getClassLoader();
        List<String> found = new ArrayList<>();
        for (String type : MODULITH_EXTERNALIZERS) {
            if (ClassUtils.isPresent(type, loader)) {
                for (String name :
                        beans.getBeanNamesForType(
                                ClassUtils.resolveClassName(type, loader), true, false)) {
                    found.add(name + " (" + ClassUtils.getShortName(type) + ")");
                }
            }
        }
        if (!found.isEmpty()) {
            throw new IllegalStateException(
                    "outbox4j: Spring Modulith externalizes events itself too: "
                            + String.join(", ", found)
                            + ", from spring-modulith-events-kafka, -amqp, -jms, -messaging or"
                            + " another broker module; it would publish every @Externalized event a"
                            + " second time after the commit. Remove that module, or set"
                            + " outbox4j.modulith.enabled=false to leave externalization to Modulith");
        }
    }

    private static boolean isModuleListener(String mode) {
        return mode.strip().replace('_', '-').equalsIgnoreCase("module-listener");
    }

    /** Writes Strings and byte arrays as they are; returns false for anything else. */
    static boolean plain(Object event, Message.Builder message) {
        if (event instanceof byte[] bytes) {
            message.contentType(Message.DEFAULT_CONTENT_TYPE).payload(bytes);
            return true;
        }
        if (event instanceof CharSequence text) {
            message.contentType("text/plain; charset=utf-8")
                    .payload(text.toString().getBytes(StandardCharsets.UTF_8));
            return true;
        }
        return false;
    }
}
