package io.outbox4j.spring.boot;

import com.mongodb.client.MongoClient;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.store.mongo.MongoOutboxStore;
import java.util.Locale;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
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
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Auto-configures outbox4j's store in a Spring Boot application: a table in the application's
 * {@code DataSource} ({@link JdbiOutboxStore}, the dialect detected, the schema created on request)
 * or, without a DataSource or with {@code outbox4j.store.type=mongodb}, a collection reached
 * through its {@code MongoClient} ({@link MongoOutboxStore}). An {@link OutboxStore} bean of the
 * application's own wins. {@link OutboxRelayAutoConfiguration} adds the outbox, the publisher and
 * the relay.
 *
 * <p>Every {@code outbox4j.*} value is checked at startup; a bad one stops the start with a report
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
    @Conditional({OutboxConditions.Single.class, JdbcStoreSelected.class})
    static class JdbcStoreConfiguration {
        @Bean
        JdbiOutboxStore outboxStore(DataSource dataSource, OutboxProperties properties) {
            return jdbcStore("store", dataSource, properties.getStore().getJdbc());
        }
    }

    /**
     * A store over a DataSource from the settings under {@code outbox4j.<prefix>.jdbc}, each bad
     * value reported under its property's name.
     */
    static JdbiOutboxStore jdbcStore(
            String prefix, DataSource dataSource, OutboxProperties.Jdbc jdbc) {
        JdbiOutboxStore.Builder b = JdbiOutboxStore.builder(Jdbi.create(dataSource));
        try {
            b.tableName(jdbc.getTableName());
        } catch (IllegalArgumentException e) {
            throw Checks.invalid(prefix + ".jdbc.table-name", jdbc.getTableName(), e);
        }
        String dialect = Checks.text(jdbc.getDialect());
        if (dialect != null) {
            b.dialect(dialect(prefix, dialect));
        }
        b.deadLettersBlockTheirKey(jdbc.isDeadLettersBlockTheirKey());
        JdbiOutboxStore store;
        try {
            store = b.build();
        } catch (IllegalArgumentException e) {
            throw Checks.invalid(prefix + ".jdbc.dialect", dialect, e);
        }
        if (jdbc.isCreateSchema()) {
            store.createSchemaIfAbsent();
        }
        return store;
    }

    private static JdbiOutboxStore.Dialect dialect(String prefix, String name) {
        try {
            return JdbiOutboxStore.Dialect.valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw Checks.invalid(
                    prefix + ".jdbc.dialect",
                    name,
                    "must be one of postgresql, mariadb, mysql, h2 (or left out to detect it)");
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
    @Conditional({OutboxConditions.Single.class, MongoStoreSelected.class})
    static class MongoStoreConfiguration {
        @Bean
        MongoOutboxStore outboxStore(
                MongoClient client, OutboxProperties properties, Environment environment) {
            return MongoStores.create(
                    "store", client, properties.getStore().getMongodb(), environment);
        }
    }

    /**
     * Several outboxes by name ({@code outbox4j.outboxes.<name>.*}): each one's store, outbox,
     * publisher and relay, qualified by its name ({@link NamedOutboxes}).
     */
    @Configuration(proxyBeanMethods = false)
    @Conditional(OutboxConditions.Named.class)
    @Import(NamedOutboxesRegistrar.class)
    static class NamedOutboxesConfiguration {}

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
}
