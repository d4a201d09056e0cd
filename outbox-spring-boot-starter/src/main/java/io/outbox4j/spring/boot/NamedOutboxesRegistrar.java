package io.outbox4j.spring.boot;

import io.outbox4j.api.Observer;
import io.outbox4j.api.Publisher;
import io.outbox4j.spring.boot.NamedOutboxes.Kind;
import io.outbox4j.spring.boot.OutboxProperties.NamedOutbox;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;

/**
 * Registers the beans of each named outbox ({@code outbox4j.outboxes.<name>.*}): its store, its
 * {@link TransactionalOutbox} (JDBC), its publisher when it has its own settings, and its relay;
 * each qualified by the outbox's name, the primary outbox's store and outbox {@code @Primary}. A
 * bean the application already defines under one of these names is left as it is (it wins).
 */
final class NamedOutboxesRegistrar extends EnvironmentRegistrar {
    @Override
    public void registerBeanDefinitions(
            AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        Environment env = environment();
        if (!(registry instanceof ConfigurableListableBeanFactory beans)) {
            throw new IllegalStateException(
                    "outbox4j: named outboxes need a ConfigurableListableBeanFactory, got "
                            + registry.getClass().getName());
        }
        Map<String, NamedOutbox> named = NamedOutboxes.bind(env);
        NamedOutboxes.checkProperties(named, env);
        Map<String, Kind> kinds = NamedOutboxes.kinds(named, beans);
        register(
                registry,
                NamedOutboxes.BEAN,
                NamedOutboxes.class,
                () -> new NamedOutboxes(beans, named, kinds, env),
                null);

        Set<String> ours = new HashSet<>();
        OutboxProperties.PublisherProperties shared =
                Binder.get(env)
                        .bind(
                                OutboxProperties.PREFIX + ".publisher",
                                OutboxProperties.PublisherProperties.class)
                        .orElseGet(OutboxProperties.PublisherProperties::new);
        if (Publishers.given(shared)
                && !registry.containsBeanDefinition(NamedOutboxes.SHARED_PUBLISHER)) {
            RootBeanDefinition d =
                    Objects.requireNonNull(
                            register(
                                    registry,
                                    NamedOutboxes.SHARED_PUBLISHER,
                                    Publisher.class,
                                    () ->
                                            OutboxRelayAutoConfiguration.publisher(
                                                    "publisher", shared, env, null),
                                    null));
            d.setLazyInit(true); // built only when an outbox without a publisher of its own uses it
            d.setDefaultCandidate(false);
            d.setDestroyMethodName(AbstractBeanDefinition.INFER_METHOD);
            ours.add(NamedOutboxes.SHARED_PUBLISHER);
        }
        for (String name : named.keySet()) {
            if (Publishers.given(named.get(name).getPublisher())) {
                ours.add(NamedOutboxes.publisherBean(name));
            }
        }

        for (Map.Entry<String, NamedOutbox> e : named.entrySet()) {
            String name = e.getKey();
            NamedOutbox o = e.getValue();
            String prefix = NamedOutboxes.prefix(name);
            Kind kind = kinds.get(name);

            RootBeanDefinition store =
                    register(
                            registry,
                            NamedOutboxes.storeBean(name),
                            kind == Kind.JDBC
                                    ? JdbiOutboxStore.class
                                    : ClassUtils.resolveClassName(
                                            NamedOutboxes.MONGO_STORE,
                                            NamedOutboxesRegistrar.class.getClassLoader()),
                            () -> {
                                NamedOutboxes outboxes = outboxes(beans);
                                return kind == Kind.JDBC
                                        ? OutboxAutoConfiguration.jdbcStore(
                                                prefix + ".store",
                                                (DataSource) outboxes.source(name),
                                                o.getStore().getJdbc())
                                        : MongoStores.createFrom(
                                                prefix + ".store",
                                                outboxes.source(name),
                                                o.getStore().getMongodb(),
                                                env);
                            },
                            name);
            if (store != null) {
                store.setPrimary(o.isPrimary());
            }

            if (kind == Kind.JDBC) {
                RootBeanDefinition outbox =
                        register(
                                registry,
                                NamedOutboxes.outboxBean(name),
                                TransactionalOutbox.class,
                                () -> transactionalOutbox(beans, name, o),
                                name);
                if (outbox != null) {
                    outbox.setPrimary(o.isPrimary());
                }
            }

            if (!o.getRelay().isEnabled()) {
                continue;
            }
            if (Publishers.given(o.getPublisher())) {
                RootBeanDefinition publisher =
                        register(
                                registry,
                                NamedOutboxes.publisherBean(name),
                                Publisher.class,
                                () ->
                                        OutboxRelayAutoConfiguration.publisher(
                                                prefix + ".publisher", o.getPublisher(), env, name),
                                name);
                if (publisher != null) {
                    publisher.setDefaultCandidate(false);
                    publisher.setDestroyMethodName(AbstractBeanDefinition.INFER_METHOD);
                }
            }
            RootBeanDefinition relay =
                    register(
                            registry,
                            NamedOutboxes.relayBean(name),
                            RelayLifecycle.class,
                            () -> relay(beans, name, o, ours),
                            name);
            if (relay != null) {
                relay.setDefaultCandidate(false);
                relay.setDependsOn(NamedOutboxes.storeBean(name));
            }
        }
    }

    private static NamedOutboxes outboxes(ConfigurableListableBeanFactory beans) {
        return beans.getBean(NamedOutboxes.BEAN, NamedOutboxes.class);
    }

    private static TransactionalOutbox transactionalOutbox(
            ConfigurableListableBeanFactory beans, String name, NamedOutbox o) {
        NamedOutboxes outboxes = outboxes(beans);
        Object store = beans.getBean(NamedOutboxes.storeBean(name));
        if (!(store instanceof JdbiOutboxStore jdbi)) {
            throw new IllegalStateException(
                    "outbox4j: the bean '"
                            + NamedOutboxes.storeBean(name)
                            + "' of outbox '"
                            + name
                            + "' is a "
                            + store.getClass().getName()
                            + ", but a TransactionalOutbox needs a JdbiOutboxStore");
        }
        Runnable wakeUp =
                o.getRelay().isWakeUpAfterCommit()
                        ? new OutboxRelayAutoConfiguration.LazyWakeUp(() -> outboxes.relay(name))
                        : () -> {};
        return new JdbcTransactionalOutbox(jdbi.jdbc(), (DataSource) outboxes.source(name), wakeUp);
    }

    private static RelayLifecycle relay(
            ConfigurableListableBeanFactory beans, String name, NamedOutbox o, Set<String> ours) {
        NamedOutboxes outboxes = outboxes(beans);
        Publisher publisher = publisher(beans, name, o, ours);
        Observer observer;
        List<RelayListener> listeners;
        if (beans.containsBean(NamedOutboxes.metricsBean(name))) {
            observer = beans.getBean(NamedOutboxes.metricsBean(name), Observer.class);
            listeners =
                    List.of(
                            beans.getBean(
                                    NamedOutboxes.metricsBinderBean(name), RelayListener.class));
        } else {
            String only =
                    NamedOutboxes.uniqueOrPrimary(
                            beans,
                            NamedOutboxes.defaultCandidates(beans, Observer.class, Set.of()));
            observer = only == null ? null : beans.getBean(only, Observer.class);
            listeners = List.of();
        }
        return OutboxRelayAutoConfiguration.relayLifecycle(
                NamedOutboxes.prefix(name) + ".relay",
                name,
                outboxes.store(name),
                publisher,
                o.getRelay(),
                observer,
                listeners);
    }

    /**
     * The outbox's publisher: the bean {@code publisher-bean} names; else the one of its own {@code
     * publisher.*} settings; else the application's only (or primary) Publisher bean; else the one
     * of {@code outbox4j.publisher.*}.
     */
    private static Publisher publisher(
            ConfigurableListableBeanFactory beans, String name, NamedOutbox o, Set<String> ours) {
        String property = NamedOutboxes.prefix(name) + ".publisher-bean";
        String chosen = Checks.text(o.getPublisherBean());
        if (chosen != null) {
            if (!beans.containsBean(chosen) || !beans.isTypeMatch(chosen, Publisher.class)) {
                throw Checks.invalid(
                        property,
                        chosen,
                        (beans.containsBean(chosen)
                                        ? "the bean '"
                                                + chosen
                                                + "' is a "
                                                + NamedOutboxes.typeName(beans, chosen)
                                                + ", not an io.outbox4j.api.Publisher"
                                        : "no bean is named '" + chosen + "'")
                                + "; the application's Publisher beans are "
                                + Arrays.toString(
                                        beans.getBeanNamesForType(Publisher.class, true, false)));
            }
            return beans.getBean(chosen, Publisher.class);
        }
        if (Publishers.given(o.getPublisher())) {
            return beans.getBean(NamedOutboxes.publisherBean(name), Publisher.class);
        }
        List<String> application = NamedOutboxes.defaultCandidates(beans, Publisher.class, ours);
        String only = NamedOutboxes.uniqueOrPrimary(beans, application);
        if (only != null) {
            return beans.getBean(only, Publisher.class);
        }
        if (application.size() > 1) {
            throw Checks.invalid(
                    property,
                    null,
                    "must name the Publisher bean of outbox '"
                            + name
                            + "': the application has several "
                            + application
                            + " and none is primary");
        }
        if (beans.containsBean(NamedOutboxes.SHARED_PUBLISHER)
                && beans.isTypeMatch(NamedOutboxes.SHARED_PUBLISHER, Publisher.class)) {
            return beans.getBean(NamedOutboxes.SHARED_PUBLISHER, Publisher.class);
        }
        throw new NoPublisherException(name);
    }

    /**
     * Registers a bean unless the application has one of that name.
     *
     * @return its definition, to be refined, or null when the application's own bean stays
     */
    private static @Nullable RootBeanDefinition register(
            BeanDefinitionRegistry registry,
            String beanName,
            Class<?> type,
            Supplier<?> supplier,
            @Nullable String qualifier) {
        if (registry.containsBeanDefinition(beanName)) {
            return null;
        }
        RootBeanDefinition d = new RootBeanDefinition(type);
        d.setInstanceSupplier(supplier);
        if (qualifier != null) {
            d.addQualifier(new AutowireCandidateQualifier(Qualifier.class, qualifier));
        }
        registry.registerBeanDefinition(beanName, d);
        return d;
    }
}
