package io.outbox4j.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.micrometer.OutboxMetrics;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Micrometer meters for outbox4j when the application has Micrometer ({@code outbox-micrometer} and
 * a {@link MeterRegistry} bean, as Actuator provides): an {@link OutboxMetrics} that is the relay's
 * observer (deliveries, publish timer, latency, store errors), reads the backlog through the
 * store's admin port (every 30 s, on a daemon thread) and binds each relay the starter starts
 * (state, last claim, publishing). Turned off with {@code outbox4j.metrics.enabled=false}; an
 * {@code OutboxMetrics} bean of the application's own wins. With named outboxes ({@code
 * outbox4j.outboxes.<name>.*}) each has its own {@code <name>OutboxMetrics}, its meters tagged
 * {@code outbox=<name>}.
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
    /**
     * The tag that names the outbox of each meter when an application has named outboxes. New in
     * 0.2 and may still change before 1.0 (CHANGELOG.md, "API stability").
     */
    public static final String OUTBOX_TAG = "outbox";

    /** Creates the configuration; Spring calls it. */
    public OutboxMetricsAutoConfiguration() {}

    /** The one outbox's meters. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OutboxConditions.Single.class)
    static class SingleOutboxMetricsConfiguration {
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

    /** Registers {@code <name>OutboxMetrics} and its relay binder for each named outbox. */
    static final class NamedOutboxesMetricsRegistrar extends EnvironmentRegistrar {
        @Override
        public void registerBeanDefinitions(
                AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
            Environment env = environment();
            if (!(registry instanceof DefaultListableBeanFactory beans)) {
                return;
            }
            for (String name : NamedOutboxes.bind(env).keySet()) {
                String metricsBean = NamedOutboxes.metricsBean(name);
                if (!registry.containsBeanDefinition(metricsBean)) {
                    RootBeanDefinition metrics = new RootBeanDefinition(OutboxMetrics.class);
                    metrics.setInstanceSupplier(
                            () ->
                                    OutboxMetrics.builder(beans.getBean(MeterRegistry.class))
                                            .tags(Tags.of(OUTBOX_TAG, name))
                                            .admin(
                                                    beans.getBean(
                                                                    NamedOutboxes.BEAN,
                                                                    NamedOutboxes.class)
                                                            .admin(name))
                                            .build());
                    metrics.setDestroyMethodName("close");
                    metrics.setDefaultCandidate(false);
                    metrics.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
                    registry.registerBeanDefinition(metricsBean, metrics);
                }
                String binderBean = NamedOutboxes.metricsBinderBean(name);
                if (!registry.containsBeanDefinition(binderBean)) {
                    RootBeanDefinition binder = new RootBeanDefinition(RelayListener.class);
                    binder.setInstanceSupplier(
                            () -> {
                                OutboxMetrics m = beans.getBean(metricsBean, OutboxMetrics.class);
                                return (RelayListener) m::relay;
                            });
                    binder.setDefaultCandidate(false);
                    registry.registerBeanDefinition(binderBean, binder);
                }
            }
        }
    }

    /** Each named outbox's meters, tagged with its name. */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OutboxConditions.Named.class)
    @Import(NamedOutboxesMetricsRegistrar.class)
    static class NamedOutboxesMetricsConfiguration {}
}
