package io.outbox4j.spring.boot;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.engine.RelaySetting;
import io.outbox4j.spring.boot.OutboxProperties.PublisherType;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Auto-configures what works on outbox4j's store (from {@link OutboxAutoConfiguration} or the
 * application's own):
 *
 * <ul>
 *   <li>{@link TransactionalOutbox}: enqueue in the Spring-managed transaction, for a {@link
 *       JdbiOutboxStore} over the application's {@code DataSource};
 *   <li>the publisher from {@code outbox4j.publisher.*} (Kafka, RabbitMQ or SQS), unless the
 *       application declares a {@link Publisher} bean;
 *   <li>the relay, started and stopped with the context (graceful: the running batch finishes and
 *       is recorded), woken after each commit that enqueued; {@code outbox4j.relay.enabled=false}
 *       when another process relays this outbox.
 * </ul>
 *
 * Relay settings left unset keep the engine's own defaults.
 */
@AutoConfiguration(after = OutboxAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "outbox4j.enabled", matchIfMissing = true)
public class OutboxRelayAutoConfiguration {
    /** The first retry delay when only {@code backoff-max} is set (the API's default backoff). */
    static final Duration DEFAULT_BACKOFF_BASE =
            RelaySetting.BACKOFF_BASE.defaultValue().orElseThrow();

    /** The longest retry delay when only {@code backoff-base} is set. */
    static final Duration DEFAULT_BACKOFF_MAX =
            RelaySetting.BACKOFF_MAX.defaultValue().orElseThrow();

    /** Creates the configuration; Spring calls it. */
    public OutboxRelayAutoConfiguration() {}

    /** Enqueue in the Spring-managed transaction, for a store over a DataSource. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean({JdbiOutboxStore.class, DataSource.class})
    @Conditional(OutboxConditions.Single.class)
    static class JdbcOutboxConfiguration {
        @Bean
        @ConditionalOnMissingBean(TransactionalOutbox.class)
        TransactionalOutbox transactionalOutbox(
                JdbiOutboxStore store,
                DataSource dataSource,
                OutboxProperties properties,
                ObjectProvider<RelayLifecycle> relay) {
            Runnable wakeUp =
                    properties.getRelay().isWakeUpAfterCommit()
                            ? new LazyWakeUp(relay::getIfAvailable)
                            : () -> {};
            return new JdbcTransactionalOutbox(store.jdbc(), dataSource, wakeUp);
        }
    }

    /** The relay and, from properties, its publisher. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "outbox4j.relay.enabled", matchIfMissing = true)
    @ConditionalOnBean(OutboxStore.class)
    @Conditional(OutboxConditions.Single.class)
    static class RelayConfiguration {
        @Bean
        @ConditionalOnMissingBean(Publisher.class)
        @Conditional(PublisherConfigured.class)
        Publisher outboxPublisher(OutboxProperties properties, Environment environment) {
            return publisher("publisher", properties.getPublisher(), environment, null);
        }

        @Bean
        RelayLifecycle outboxRelay(
                OutboxStore store,
                ObjectProvider<Publisher> publishers,
                ObjectProvider<Observer> observers,
                ObjectProvider<RelayListener> listeners,
                OutboxProperties properties) {
            Publisher publisher = publishers.getIfAvailable();
            if (publisher == null) {
                throw new NoPublisherException(null);
            }
            return relayLifecycle(
                    "relay",
                    null,
                    store,
                    publisher,
                    properties.getRelay(),
                    observers.getIfUnique(),
                    listeners.orderedStream().toList());
        }
    }

    /**
     * The publisher the settings under {@code outbox4j.<prefix>} describe.
     *
     * @param outbox the named outbox they belong to, or null for the single outbox
     */
    static Publisher publisher(
            String prefix,
            OutboxProperties.PublisherProperties settings,
            Environment environment,
            @Nullable String outbox) {
        PublisherType type = Publishers.resolve(prefix, settings);
        if (type == null) {
            throw new NoPublisherException(outbox);
        }
        String app = environment.getProperty("spring.application.name", "spring");
        return Publishers.create(
                prefix, type, settings, "outbox4j-" + app + (outbox == null ? "" : "-" + outbox));
    }

    /**
     * The relay's lifecycle over settings under {@code outbox4j.<prefix>}; every setting is checked
     * now, at startup, not at the first start().
     *
     * @param outbox the named outbox, whose name then starts the relay's default owner (in its log
     *     lines and thread names), or null for the single outbox
     */
    static RelayLifecycle relayLifecycle(
            String prefix,
            @Nullable String outbox,
            OutboxStore store,
            Publisher publisher,
            RelayProperties relay,
            @Nullable Observer observer,
            List<RelayListener> listeners) {
        Supplier<Relay> factory =
                () -> {
                    Relay.Builder b = relayBuilder(prefix, store, publisher, relay, observer);
                    if (outbox != null && Checks.text(relay.getOwner()) == null) {
                        b.owner(outbox + "-" + defaultOwnerSuffix());
                    }
                    return buildChecked(prefix, b);
                };
        factory.get().close();
        return new RelayLifecycle(factory, listeners);
    }

    /** The engine's default owner without the outbox: host, process id and a random part. */
    private static String defaultOwnerSuffix() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException | RuntimeException e) {
                host = "localhost";
            }
        }
        String clean = host.replaceAll("[^A-Za-z0-9._-]", "-");
        if (clean.length() > 160) {
            clean = clean.substring(0, 160);
        }
        return clean
                + "-"
                + ProcessHandle.current().pid()
                + "-"
                + Integer.toHexString(
                        java.util.concurrent.ThreadLocalRandom.current().nextInt() | 0x10000000);
    }

    /** The relay builder with every property that is set; unset ones keep the engine's default. */
    static Relay.Builder relayBuilder(
            OutboxStore store,
            Publisher publisher,
            RelayProperties p,
            @Nullable Observer observer) {
        return relayBuilder("relay", store, publisher, p, observer);
    }

    /**
     * As {@link #relayBuilder(OutboxStore, Publisher, RelayProperties, Observer)}, under a prefix.
     */
    static Relay.Builder relayBuilder(
            String prefix,
            OutboxStore store,
            Publisher publisher,
            RelayProperties p,
            @Nullable Observer observer) {
        Relay.Builder b = Relay.builder(store, publisher);
        set(prefix, RelaySetting.BATCH_SIZE, p.getBatchSize(), b::batchSize);
        set(prefix, RelaySetting.MIN_BATCH_SIZE, p.getMinBatchSize(), b::minBatchSize);
        set(prefix, RelaySetting.MAX_IN_FLIGHT, p.getMaxInFlight(), b::maxInFlight);
        set(prefix, RelaySetting.WAKE_UP_WINDOW, p.getWakeUpWindow(), b::wakeUpWindow);
        set(prefix, RelaySetting.WORKERS, p.getWorkers(), b::workers);
        set(prefix, RelaySetting.DELIVERY_TIMEOUT, p.getDeliveryTimeout(), b::deliveryTimeout);
        set(prefix, RelaySetting.LEASE, p.getLease(), b::lease);
        set(prefix, RelaySetting.MEMBER_LEASE, p.getMemberLease(), b::memberLease);
        set(prefix, RelaySetting.MAX_ATTEMPTS, p.getMaxAttempts(), b::maxAttempts);
        Backoff backoff = backoff(prefix, p);
        if (backoff != null) {
            b.backoff(backoff);
        }
        set(prefix, RelaySetting.POLL_INTERVAL, p.getPollInterval(), b::pollInterval);
        set(prefix, RelaySetting.SHUTDOWN_TIMEOUT, p.getShutdownTimeout(), b::shutdownTimeout);
        if (p.getMembership() != null) {
            b.membership(p.getMembership());
        }
        String owner = Checks.text(p.getOwner());
        if (owner != null) {
            b.owner(owner);
        }
        if (observer != null) {
            b.observer(observer);
        }
        return b;
    }

    /** Checks a set property against its definition and hands it to the builder. */
    private static <T extends Comparable<T>> void set(
            String prefix, RelaySetting<T> setting, @Nullable T value, Consumer<T> builder) {
        if (value != null) {
            builder.accept(Checks.setting(prefix, setting, value));
        }
    }

    private static @Nullable Backoff backoff(String prefix, RelayProperties p) {
        if (p.getBackoffBase() == null && p.getBackoffMax() == null) {
            return null;
        }
        Duration base =
                p.getBackoffBase() == null
                        ? DEFAULT_BACKOFF_BASE
                        : Checks.setting(prefix, RelaySetting.BACKOFF_BASE, p.getBackoffBase());
        Duration max;
        if (p.getBackoffMax() == null) {
            max = base.compareTo(DEFAULT_BACKOFF_MAX) > 0 ? base : DEFAULT_BACKOFF_MAX;
        } else {
            max = Checks.setting(prefix, RelaySetting.BACKOFF_MAX, p.getBackoffMax());
        }
        if (max.compareTo(base) < 0) {
            throw Checks.invalid(
                    prefix + ".backoff-max",
                    max,
                    "must not be shorter than "
                            + Checks.name(prefix + ".backoff-base")
                            + " ("
                            + Checks.format(base)
                            + ")");
        }
        return Backoff.exponential(base, max);
    }

    private static Relay buildChecked(String prefix, Relay.Builder b) {
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    Checks.name(prefix)
                            + ".* settings were rejected by the relay: "
                            + e.getMessage(),
                    e);
        }
    }

    /** Resolves the relay on the first commit, so the outbox and the relay need no start order. */
    static final class LazyWakeUp implements Runnable {
        private final Supplier<@Nullable RelayLifecycle> provider;
        private volatile @Nullable RelayLifecycle relay;
        private volatile boolean resolved;

        LazyWakeUp(Supplier<@Nullable RelayLifecycle> provider) {
            this.provider = provider;
        }

        @Override
        public void run() {
            if (!resolved) {
                relay = provider.get();
                resolved = true;
            }
            RelayLifecycle r = relay;
            if (r != null) {
                r.wakeUp();
            }
        }
    }

    /** Some {@code outbox4j.publisher.*} setting names a transport. */
    static final class PublisherConfigured extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(
                ConditionContext context, AnnotatedTypeMetadata metadata) {
            OutboxProperties.PublisherProperties p =
                    Binder.get(context.getEnvironment())
                            .bind("outbox4j.publisher", OutboxProperties.PublisherProperties.class)
                            .orElseGet(OutboxProperties.PublisherProperties::new);
            return Publishers.given(p)
                    ? ConditionOutcome.match("outbox4j.publisher settings are given")
                    : ConditionOutcome.noMatch("no outbox4j.publisher setting is given");
        }
    }
}
