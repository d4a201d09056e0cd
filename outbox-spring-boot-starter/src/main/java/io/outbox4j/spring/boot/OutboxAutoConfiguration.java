package io.outbox4j.spring.boot;

import com.mongodb.client.MongoClient;
import io.outbox4j.api.Backoff;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.spring.boot.OutboxProperties.PublisherType;
import io.outbox4j.spring.boot.OutboxProperties.RelayProperties;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.store.mongo.MongoOutboxStore;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Auto-configures outbox4j in a Spring Boot application:
 *
 * <ul>
 *   <li>the store: a table in the application's {@code DataSource} ({@link JdbiOutboxStore}, the
 *       dialect detected) or, without one, a collection reached through its {@code MongoClient}
 *       ({@link MongoOutboxStore}); an {@link OutboxStore} bean of the application's own wins;
 *   <li>{@link TransactionalOutbox}: enqueue in the Spring-managed transaction (JDBC store);
 *   <li>the publisher from {@code outbox4j.publisher.*} (Kafka, RabbitMQ or SQS), unless the
 *       application declares a {@link Publisher} bean;
 *   <li>the relay, started and stopped with the context (graceful: the running batch finishes), and
 *       woken after each commit that enqueued.
 * </ul>
 *
 * Every {@code outbox4j.*} value is checked at startup; a bad one stops the start with a report
 * that names the property and the reason.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
            "org.springframework.boot.mongodb.autoconfigure.MongoAutoConfiguration"
        })
@ConditionalOnBooleanProperty(name = "outbox4j.enabled", matchIfMissing = true)
@EnableConfigurationProperties(OutboxProperties.class)
public class OutboxAutoConfiguration {
    /** Creates the configuration; Spring calls it. */
    public OutboxAutoConfiguration() {}

    /** The store over the application's DataSource. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(DataSource.class)
    @ConditionalOnMissingBean(OutboxStore.class)
    @Conditional(JdbcStoreSelected.class)
    static class JdbcStoreConfiguration {
        @Bean
        JdbiOutboxStore outboxStore(DataSource dataSource, OutboxProperties properties) {
            OutboxProperties.Jdbc jdbc = properties.getStore().getJdbc();
            JdbiOutboxStore.Builder b = JdbiOutboxStore.builder(Jdbi.create(dataSource));
            try {
                b.tableName(jdbc.getTableName());
            } catch (IllegalArgumentException e) {
                throw Checks.invalid("store.jdbc.table-name", jdbc.getTableName(), e);
            }
            String dialect = Checks.text(jdbc.getDialect());
            if (dialect != null) {
                b.dialect(dialect(dialect));
            }
            b.deadLettersBlockTheirKey(jdbc.isDeadLettersBlockTheirKey());
            JdbiOutboxStore store;
            try {
                store = b.build();
            } catch (IllegalArgumentException e) {
                throw Checks.invalid("store.jdbc.dialect", dialect, e);
            }
            if (jdbc.isCreateSchema()) {
                store.createSchemaIfAbsent();
            }
            return store;
        }

        private static JdbiOutboxStore.Dialect dialect(String name) {
            try {
                return JdbiOutboxStore.Dialect.valueOf(name.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw Checks.invalid(
                        "store.jdbc.dialect",
                        name,
                        "must be one of postgresql, mariadb, mysql, h2 (or left out to detect it)");
            }
        }
    }

    /** Enqueue in the Spring-managed transaction, for a store over a DataSource. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBean({JdbiOutboxStore.class, DataSource.class})
    static class JdbcOutboxConfiguration {
        @Bean
        @ConditionalOnMissingBean(TransactionalOutbox.class)
        TransactionalOutbox transactionalOutbox(
                JdbiOutboxStore store,
                DataSource dataSource,
                OutboxProperties properties,
                ObjectProvider<RelayLifecycle> relay) {
            Runnable wakeUp =
                    properties.getRelay().isWakeUpAfterCommit() ? new LazyWakeUp(relay) : () -> {};
            return new JdbcTransactionalOutbox(store.jdbc(), dataSource, wakeUp);
        }
    }

    /**
     * The store over the application's MongoClient, when there is no DataSource or it is asked for.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {"io.outbox4j.store.mongo.MongoOutboxStore", "com.mongodb.client.MongoClient"})
    @ConditionalOnBean(type = "com.mongodb.client.MongoClient")
    @ConditionalOnMissingBean(OutboxStore.class)
    @Conditional(MongoStoreSelected.class)
    static class MongoStoreConfiguration {
        @Bean
        MongoOutboxStore outboxStore(
                MongoClient client, OutboxProperties properties, Environment environment) {
            OutboxProperties.Mongodb mongo = properties.getStore().getMongodb();
            String database = Checks.text(mongo.getDatabase());
            if (database == null) {
                database = Checks.text(environment.getProperty("spring.mongodb.database"));
            }
            if (database == null) {
                throw Checks.invalid(
                        "store.mongodb.database",
                        null,
                        "is required for the MongoDB store (or set spring.mongodb.database)");
            }
            MongoOutboxStore.Builder b = MongoOutboxStore.builder().client(client);
            try {
                b.database(database);
            } catch (IllegalArgumentException e) {
                throw Checks.invalid("store.mongodb.database", database, e);
            }
            try {
                b.collection(mongo.getCollection());
            } catch (IllegalArgumentException e) {
                throw Checks.invalid("store.mongodb.collection", mongo.getCollection(), e);
            }
            MongoOutboxStore store = b.build();
            if (mongo.isCreateIndexes()) {
                store.createIndexes();
            }
            return store;
        }
    }

    /** The relay and, from properties, its publisher. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "outbox4j.relay.enabled", matchIfMissing = true)
    @ConditionalOnBean(OutboxStore.class)
    static class RelayConfiguration {
        @Bean
        @ConditionalOnMissingBean(Publisher.class)
        @Conditional(PublisherConfigured.class)
        Publisher outboxPublisher(OutboxProperties properties, Environment environment) {
            PublisherType type = Publishers.resolve(properties.getPublisher());
            if (type == null) {
                throw new IllegalStateException("no outbox4j.publisher.* setting is given");
            }
            String app = environment.getProperty("spring.application.name", "spring");
            return Publishers.create(type, properties.getPublisher(), "outbox4j-" + app);
        }

        @Bean
        RelayLifecycle outboxRelay(
                OutboxStore store,
                ObjectProvider<Publisher> publishers,
                ObjectProvider<Observer> observers,
                OutboxProperties properties) {
            Publisher publisher = publishers.getIfAvailable();
            if (publisher == null) {
                throw new NoPublisherException();
            }
            Observer observer = observers.getIfUnique();
            RelayProperties relay = properties.getRelay();
            Relay.Builder prototype = relayBuilder(store, publisher, relay, observer);
            // The settings are checked now, at startup, not at the first start().
            buildChecked(prototype).close();
            Supplier<Relay> factory =
                    () -> buildChecked(relayBuilder(store, publisher, relay, observer));
            return new RelayLifecycle(factory);
        }
    }

    static Relay.Builder relayBuilder(
            OutboxStore store,
            Publisher publisher,
            RelayProperties p,
            @Nullable Observer observer) {
        Relay.Builder b =
                Relay.builder(store, publisher)
                        .batchSize(
                                Checks.between(
                                        "relay.batch-size",
                                        p.getBatchSize(),
                                        1,
                                        ClaimRequest.MAX_LIMIT))
                        .workers(Checks.between("relay.workers", p.getWorkers(), 1, 1024))
                        .deliveryTimeout(
                                Checks.positive("relay.delivery-timeout", p.getDeliveryTimeout()))
                        .lease(
                                Checks.within(
                                        "relay.lease",
                                        p.getLease(),
                                        Relay.MIN_LEASE,
                                        Relay.MAX_LEASE))
                        .maxAttempts(
                                Checks.between(
                                        "relay.max-attempts",
                                        p.getMaxAttempts(),
                                        1,
                                        Integer.MAX_VALUE))
                        .backoff(backoff(p))
                        .pollInterval(Checks.positive("relay.poll-interval", p.getPollInterval()))
                        .shutdownTimeout(
                                Checks.notNegative(
                                        "relay.shutdown-timeout", p.getShutdownTimeout()));
        String owner = Checks.text(p.getOwner());
        if (owner != null) {
            b.owner(owner);
        }
        if (observer != null) {
            b.observer(observer);
        }
        return b;
    }

    private static Backoff backoff(RelayProperties p) {
        Duration base = Checks.positive("relay.backoff-base", p.getBackoffBase());
        Duration max = Checks.positive("relay.backoff-max", p.getBackoffMax());
        if (max.compareTo(base) < 0) {
            throw Checks.invalid(
                    "relay.backoff-max",
                    max,
                    "must not be shorter than outbox4j.relay.backoff-base ("
                            + Checks.format(base)
                            + ")");
        }
        return Backoff.exponential(base, max);
    }

    private static Relay buildChecked(Relay.Builder b) {
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    "outbox4j.relay.* settings were rejected by the relay: " + e.getMessage(), e);
        }
    }

    /** Resolves the relay on the first commit, so the outbox and the relay need no start order. */
    private static final class LazyWakeUp implements Runnable {
        private final ObjectProvider<RelayLifecycle> provider;
        private volatile @Nullable RelayLifecycle relay;
        private volatile boolean resolved;

        LazyWakeUp(ObjectProvider<RelayLifecycle> provider) {
            this.provider = provider;
        }

        @Override
        public void run() {
            if (!resolved) {
                relay = provider.getIfAvailable();
                resolved = true;
            }
            RelayLifecycle r = relay;
            if (r != null) {
                r.wakeUp();
            }
        }
    }

    /** {@code outbox4j.store.type} is auto or jdbc. */
    static final class JdbcStoreSelected extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(
                ConditionContext context, AnnotatedTypeMetadata metadata) {
            String type = context.getEnvironment().getProperty("outbox4j.store.type", "auto");
            return type.equalsIgnoreCase("mongodb")
                    ? ConditionOutcome.noMatch("outbox4j.store.type is " + type)
                    : ConditionOutcome.match("outbox4j.store.type is " + type);
        }
    }

    /** {@code outbox4j.store.type} is mongodb, or auto without a DataSource. */
    static final class MongoStoreSelected extends AnyNestedCondition {
        MongoStoreSelected() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(name = "outbox4j.store.type", havingValue = "mongodb")
        static class Explicit {}

        @ConditionalOnProperty(
                name = "outbox4j.store.type",
                havingValue = "auto",
                matchIfMissing = true)
        @ConditionalOnMissingBean(DataSource.class)
        static class AutoWithoutDataSource {}
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
            boolean given =
                    p.getType() != PublisherType.AUTO
                            || Checks.text(p.getKafka().getBootstrapServers()) != null
                            || Checks.text(p.getRabbitmq().getUri()) != null
                            || Checks.text(p.getSqs().getEndpoint()) != null
                            || Checks.text(p.getSqs().getRegion()) != null;
            return given
                    ? ConditionOutcome.match("outbox4j.publisher settings are given")
                    : ConditionOutcome.noMatch("no outbox4j.publisher setting is given");
        }
    }
}
