package io.outbox4j.spring.boot;

import io.outbox4j.api.Incubating;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * The {@code outbox4j.*} settings. Every duration takes Spring's forms ({@code 30s}, {@code 500ms},
 * {@code PT1M}). The defaults are the engine's and the stores' own; {@link OutboxAutoConfiguration}
 * checks every value at startup and names the property of the first bad one.
 */
@ConfigurationProperties(prefix = OutboxProperties.PREFIX)
public class OutboxProperties {
    /** The prefix of every property. */
    public static final String PREFIX = "outbox4j";

    /** Whether to auto-configure outbox4j at all. */
    private boolean enabled = true;

    private final Store store = new Store();
    @NestedConfigurationProperty private final RelayProperties relay = new RelayProperties();
    private final PublisherProperties publisher = new PublisherProperties();
    @NestedConfigurationProperty private final HealthProperties health = new HealthProperties();
    @NestedConfigurationProperty private final ConsoleProperties console = new ConsoleProperties();
    private final Modulith modulith = new Modulith();
    private final Metrics metrics = new Metrics();

    /**
     * Several outboxes by name (outbox4j.outboxes.<name>.data-source, .store.*, .relay.*,
     * .publisher.*...); none by default, for one outbox configured by outbox4j.store.*,
     * outbox4j.relay.* and outbox4j.publisher.*.
     */
    private Map<String, NamedOutbox> outboxes = new LinkedHashMap<>();

    /** Creates the defaults. */
    public OutboxProperties() {}

    /**
     * Whether outbox4j is auto-configured.
     *
     * @return {@code true} by default
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether outbox4j is auto-configured.
     *
     * @param enabled {@code false} to configure nothing
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * The store settings.
     *
     * @return the store settings
     */
    public Store getStore() {
        return store;
    }

    /**
     * The relay settings.
     *
     * @return the relay settings
     */
    public RelayProperties getRelay() {
        return relay;
    }

    /**
     * The publisher settings.
     *
     * @return the publisher settings
     */
    public PublisherProperties getPublisher() {
        return publisher;
    }

    /**
     * The health indicator settings.
     *
     * @return the health settings
     */
    public HealthProperties getHealth() {
        return health;
    }

    /**
     * The web console settings.
     *
     * @return the console settings
     */
    public ConsoleProperties getConsole() {
        return console;
    }

    /**
     * The Spring Modulith settings.
     *
     * @return the Modulith settings
     */
    public Modulith getModulith() {
        return modulith;
    }

    /**
     * The Micrometer settings.
     *
     * @return the metrics settings
     */
    public Metrics getMetrics() {
        return metrics;
    }

    /**
     * Several outboxes in one application, by name: {@code outbox4j.outboxes.<name>.*}. Empty by
     * default: one outbox, configured by {@code outbox4j.store.*}, {@code outbox4j.relay.*} and
     * {@code outbox4j.publisher.*}. Once a name is given, every outbox is a named one and {@code
     * outbox4j.store.*} and {@code outbox4j.relay.*} are refused (each outbox has its own); {@code
     * outbox4j.publisher.*}, {@code outbox4j.health.*}, {@code outbox4j.metrics.*} and {@code
     * outbox4j.modulith.*} still apply to all of them.
     *
     * <p>New in 0.2 and may still change before 1.0 (CHANGELOG.md, "API stability").
     *
     * @return the named outboxes, in the order given
     */
    @Incubating
    public Map<String, NamedOutbox> getOutboxes() {
        return outboxes;
    }

    /**
     * Sets the named outboxes.
     *
     * @param outboxes the outboxes by name
     */
    public void setOutboxes(Map<String, NamedOutbox> outboxes) {
        this.outboxes = outboxes;
    }

    /**
     * One of several outboxes of an application ({@code outbox4j.outboxes.<name>.*}): where it
     * lives, its relay and where that publishes. Its beans are qualified by its name
     * ({@code @Qualifier("<name>") TransactionalOutbox}).
     *
     * <p>New in 0.2 and may still change before 1.0 (CHANGELOG.md, "API stability").
     */
    @Incubating
    public static class NamedOutbox {
        /**
         * Whether this outbox is the one injected without a qualifier and the one Spring Modulith's
         * externalized events go to. At most one outbox is primary.
         */
        private boolean primary;

        /**
         * The name of the DataSource bean that holds this outbox's table; the application's only
         * (or primary) DataSource when not set.
         */
        private @Nullable String dataSource;

        /**
         * The name of the MongoClient bean that reaches this outbox's collection (a MongoDB
         * outbox); the application's only (or primary) MongoClient when not set.
         */
        private @Nullable String mongoClient;

        /**
         * The name of the Publisher bean this outbox's relay publishes to, instead of one built
         * from its publisher.* settings.
         */
        private @Nullable String publisherBean;

        private final Store store = new Store();
        @NestedConfigurationProperty private final RelayProperties relay = new RelayProperties();
        private final PublisherProperties publisher = new PublisherProperties();

        /** Creates the defaults. */
        public NamedOutbox() {}

        /**
         * Whether this outbox is the primary one.
         *
         * @return {@code false} by default
         */
        public boolean isPrimary() {
            return primary;
        }

        /**
         * Sets whether this outbox is the primary one.
         *
         * @param primary the flag
         */
        public void setPrimary(boolean primary) {
            this.primary = primary;
        }

        /**
         * The DataSource bean's name.
         *
         * @return the bean name, or null for the application's only or primary DataSource
         */
        public @Nullable String getDataSource() {
            return dataSource;
        }

        /**
         * Sets the DataSource bean's name.
         *
         * @param dataSource the bean name
         */
        public void setDataSource(@Nullable String dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * The MongoClient bean's name.
         *
         * @return the bean name, or null for the application's only or primary MongoClient
         */
        public @Nullable String getMongoClient() {
            return mongoClient;
        }

        /**
         * Sets the MongoClient bean's name.
         *
         * @param mongoClient the bean name
         */
        public void setMongoClient(@Nullable String mongoClient) {
            this.mongoClient = mongoClient;
        }

        /**
         * The Publisher bean's name.
         *
         * @return the bean name, or null to build the publisher from the settings
         */
        public @Nullable String getPublisherBean() {
            return publisherBean;
        }

        /**
         * Sets the Publisher bean's name.
         *
         * @param publisherBean the bean name
         */
        public void setPublisherBean(@Nullable String publisherBean) {
            this.publisherBean = publisherBean;
        }

        /**
         * Where this outbox lives, as {@code outbox4j.store.*} for the single outbox.
         *
         * @return the store settings
         */
        public Store getStore() {
            return store;
        }

        /**
         * This outbox's relay, as {@code outbox4j.relay.*} for the single outbox.
         *
         * @return the relay settings
         */
        public RelayProperties getRelay() {
            return relay;
        }

        /**
         * This outbox's own publisher, as {@code outbox4j.publisher.*}; when none is given the
         * relay publishes to the application's Publisher bean or the one of {@code
         * outbox4j.publisher.*}.
         *
         * @return the publisher settings
         */
        public PublisherProperties getPublisher() {
            return publisher;
        }
    }

    /** Which store holds the outbox. */
    public enum StoreType {
        /** The application's {@code DataSource} if it has one, else its {@code MongoClient}. */
        AUTO,
        /** A table in the application's {@code DataSource} (store-jdbi). */
        JDBC,
        /** A collection reached through the application's {@code MongoClient} (store-mongo). */
        MONGODB
    }

    /** Where the outbox lives. */
    public static class Store {
        /**
         * Which store holds the outbox: auto (the DataSource, else the MongoClient), jdbc or
         * mongodb.
         */
        private StoreType type = StoreType.AUTO;

        private final Jdbc jdbc = new Jdbc();
        private final Mongodb mongodb = new Mongodb();

        /** Creates the defaults. */
        public Store() {}

        /**
         * The store type.
         *
         * @return {@link StoreType#AUTO} by default
         */
        public StoreType getType() {
            return type;
        }

        /**
         * Sets the store type.
         *
         * @param type the type
         */
        public void setType(StoreType type) {
            this.type = type;
        }

        /**
         * The JDBC store settings.
         *
         * @return the JDBC settings
         */
        public Jdbc getJdbc() {
            return jdbc;
        }

        /**
         * The MongoDB store settings.
         *
         * @return the MongoDB settings
         */
        public Mongodb getMongodb() {
            return mongodb;
        }
    }

    /** The outbox table in the application's DataSource. */
    public static class Jdbc {
        /** The outbox table (a plain identifier, quoted in every statement, so case-sensitive). */
        private String tableName = "outbox_message";

        /**
         * The database dialect: postgresql, mariadb, mysql or h2. Detected from the connection when
         * not set.
         */
        private @Nullable String dialect;

        /**
         * Whether to create the table, its indexes and its lock table at startup unless they exist.
         * Off by default: run the dialect's DDL as a Flyway or Liquibase migration instead.
         */
        private boolean createSchema;

        /**
         * Whether a dead letter holds back the later messages of its key until it is replayed or
         * discarded.
         */
        private boolean deadLettersBlockTheirKey = true;

        /** Creates the defaults. */
        public Jdbc() {}

        /**
         * The table name.
         *
         * @return {@code outbox_message} by default
         */
        public String getTableName() {
            return tableName;
        }

        /**
         * Sets the table name.
         *
         * @param tableName the table name
         */
        public void setTableName(String tableName) {
            this.tableName = tableName;
        }

        /**
         * The dialect, or null to detect it.
         *
         * @return the dialect name
         */
        public @Nullable String getDialect() {
            return dialect;
        }

        /**
         * Sets the dialect.
         *
         * @param dialect postgresql, mariadb, mysql or h2
         */
        public void setDialect(@Nullable String dialect) {
            this.dialect = dialect;
        }

        /**
         * Whether the schema is created at startup.
         *
         * @return {@code false} by default
         */
        public boolean isCreateSchema() {
            return createSchema;
        }

        /**
         * Sets whether the schema is created at startup.
         *
         * @param createSchema {@code true} to create it unless it exists
         */
        public void setCreateSchema(boolean createSchema) {
            this.createSchema = createSchema;
        }

        /**
         * Whether dead letters block their key.
         *
         * @return {@code true} by default
         */
        public boolean isDeadLettersBlockTheirKey() {
            return deadLettersBlockTheirKey;
        }

        /**
         * Sets whether dead letters block their key.
         *
         * @param deadLettersBlockTheirKey the flag
         */
        public void setDeadLettersBlockTheirKey(boolean deadLettersBlockTheirKey) {
            this.deadLettersBlockTheirKey = deadLettersBlockTheirKey;
        }
    }

    /** The outbox collection reached through the application's MongoClient. */
    public static class Mongodb {
        /** The database of the outbox collection; required for the MongoDB store. */
        private @Nullable String database;

        /** The outbox collection. */
        private String collection = "outbox_message";

        /** Whether to create the store's indexes at startup. */
        private boolean createIndexes;

        /** Creates the defaults. */
        public Mongodb() {}

        /**
         * The database name.
         *
         * @return the name, or null if not set
         */
        public @Nullable String getDatabase() {
            return database;
        }

        /**
         * Sets the database name.
         *
         * @param database the name
         */
        public void setDatabase(@Nullable String database) {
            this.database = database;
        }

        /**
         * The collection name.
         *
         * @return {@code outbox_message} by default
         */
        public String getCollection() {
            return collection;
        }

        /**
         * Sets the collection name.
         *
         * @param collection the name
         */
        public void setCollection(String collection) {
            this.collection = collection;
        }

        /**
         * Whether indexes are created at startup.
         *
         * @return {@code false} by default
         */
        public boolean isCreateIndexes() {
            return createIndexes;
        }

        /**
         * Sets whether indexes are created at startup.
         *
         * @param createIndexes the flag
         */
        public void setCreateIndexes(boolean createIndexes) {
            this.createIndexes = createIndexes;
        }
    }

    /** Which transport the relay publishes to. */
    public enum PublisherType {
        /** The one transport whose settings are given. */
        AUTO,
        /** Apache Kafka (publisher-kafka). */
        KAFKA,
        /** RabbitMQ (publisher-rabbitmq). */
        RABBITMQ,
        /** Amazon SQS or a compatible endpoint (publisher-sqs). */
        SQS
    }

    /**
     * The publisher built from properties when the application declares no {@code Publisher} bean.
     */
    public static class PublisherProperties {
        /**
         * Which transport to publish to: auto (the one whose settings are given), kafka, rabbitmq
         * or sqs.
         */
        private PublisherType type = PublisherType.AUTO;

        private final Kafka kafka = new Kafka();
        private final Rabbitmq rabbitmq = new Rabbitmq();
        private final Sqs sqs = new Sqs();

        /** Creates the defaults. */
        public PublisherProperties() {}

        /**
         * The publisher type.
         *
         * @return {@link PublisherType#AUTO} by default
         */
        public PublisherType getType() {
            return type;
        }

        /**
         * Sets the publisher type.
         *
         * @param type the type
         */
        public void setType(PublisherType type) {
            this.type = type;
        }

        /**
         * The Kafka settings.
         *
         * @return the Kafka settings
         */
        public Kafka getKafka() {
            return kafka;
        }

        /**
         * The RabbitMQ settings.
         *
         * @return the RabbitMQ settings
         */
        public Rabbitmq getRabbitmq() {
            return rabbitmq;
        }

        /**
         * The SQS settings.
         *
         * @return the SQS settings
         */
        public Sqs getSqs() {
            return sqs;
        }
    }

    /** The Kafka publisher (idempotent producer, acks=all). */
    public static class Kafka {
        /** The brokers, host:port[,host:port...]. */
        private @Nullable String bootstrapServers;

        /**
         * Further producer settings passed as they are (security.protocol, compression.type...).
         */
        private Map<String, String> properties = new LinkedHashMap<>();

        /** Creates the defaults. */
        public Kafka() {}

        /**
         * The bootstrap servers.
         *
         * @return the servers, or null if not set
         */
        public @Nullable String getBootstrapServers() {
            return bootstrapServers;
        }

        /**
         * Sets the bootstrap servers.
         *
         * @param bootstrapServers host:port[,host:port...]
         */
        public void setBootstrapServers(@Nullable String bootstrapServers) {
            this.bootstrapServers = bootstrapServers;
        }

        /**
         * The further producer settings.
         *
         * @return the settings
         */
        public Map<String, String> getProperties() {
            return properties;
        }

        /**
         * Sets the further producer settings.
         *
         * @param properties the settings
         */
        public void setProperties(Map<String, String> properties) {
            this.properties = properties;
        }
    }

    /** The RabbitMQ publisher (publisher confirms, persistent, mandatory). */
    public static class Rabbitmq {
        /** The broker, amqp://user:pass@host:5672/vhost or amqps://... */
        private @Nullable String uri;

        /**
         * The exchange messages go to, with the topic as routing key; the default exchange (a queue
         * per topic) when not set.
         */
        private @Nullable String exchange;

        /** Creates the defaults. */
        public Rabbitmq() {}

        /**
         * The AMQP URI.
         *
         * @return the URI, or null if not set
         */
        public @Nullable String getUri() {
            return uri;
        }

        /**
         * Sets the AMQP URI.
         *
         * @param uri the URI
         */
        public void setUri(@Nullable String uri) {
            this.uri = uri;
        }

        /**
         * The exchange.
         *
         * @return the exchange, or null for the default exchange
         */
        public @Nullable String getExchange() {
            return exchange;
        }

        /**
         * Sets the exchange.
         *
         * @param exchange the exchange
         */
        public void setExchange(@Nullable String exchange) {
            this.exchange = exchange;
        }
    }

    /** The SQS publisher (a queue per topic). */
    public static class Sqs {
        /**
         * The endpoint, for a local or compatible service (http://localhost:9324); AWS itself when
         * not set.
         */
        private @Nullable String endpoint;

        /** The region; the SDK's (AWS_REGION) when not set. */
        private @Nullable String region;

        /** Creates the defaults. */
        public Sqs() {}

        /**
         * The endpoint.
         *
         * @return the endpoint, or null for AWS
         */
        public @Nullable String getEndpoint() {
            return endpoint;
        }

        /**
         * Sets the endpoint.
         *
         * @param endpoint the endpoint URL
         */
        public void setEndpoint(@Nullable String endpoint) {
            this.endpoint = endpoint;
        }

        /**
         * The region.
         *
         * @return the region, or null for the SDK's
         */
        public @Nullable String getRegion() {
            return region;
        }

        /**
         * Sets the region.
         *
         * @param region the region
         */
        public void setRegion(@Nullable String region) {
            this.region = region;
        }
    }

    /** Spring Modulith's event externalization. */
    public static class Modulith {
        /**
         * Whether events selected by Spring Modulith's EventExternalizationConfiguration (by
         * default those annotated with @Externalized) are enqueued in the publishing transaction.
         */
        private boolean enabled = true;

        /**
         * The module name stamped on the messages of externalized events; spring.application.name
         * when not set, else "application".
         */
        private @Nullable String module;

        /**
         * With several named outboxes: the one externalized events go to; the primary one (or the
         * only one) when not set.
         */
        private @Nullable String outbox;

        /** Creates the defaults. */
        public Modulith() {}

        /**
         * The named outbox externalized events go to.
         *
         * @return the outbox's name, or null for the primary or only one
         */
        public @Nullable String getOutbox() {
            return outbox;
        }

        /**
         * Sets the named outbox externalized events go to.
         *
         * @param outbox the outbox's name
         */
        public void setOutbox(@Nullable String outbox) {
            this.outbox = outbox;
        }

        /**
         * Whether externalized events are enqueued.
         *
         * @return {@code true} by default
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether externalized events are enqueued.
         *
         * @param enabled the flag
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The module name of the messages.
         *
         * @return the module name, or null for spring.application.name
         */
        public @Nullable String getModule() {
            return module;
        }

        /**
         * Sets the module name of the messages.
         *
         * @param module the module name
         */
        public void setModule(@Nullable String module) {
            this.module = module;
        }
    }

    /** Micrometer meters (outbox-micrometer), bound when a MeterRegistry bean exists. */
    public static class Metrics {
        /**
         * Whether outbox4j's meters are bound: the relay's observer and gauges, and the backlog
         * read through the store's admin port every 30 s.
         */
        private boolean enabled = true;

        /** Creates the defaults. */
        public Metrics() {}

        /**
         * Whether the meters are bound.
         *
         * @return {@code true} by default
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether the meters are bound.
         *
         * @param enabled whether to bind them
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
