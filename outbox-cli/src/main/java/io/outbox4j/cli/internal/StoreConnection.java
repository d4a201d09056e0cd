package io.outbox4j.cli.internal;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.store.mongo.MongoOutboxStore;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Jdbi;

/**
 * An outbox store opened from the {@code store.*} settings: a JDBC URL (PostgreSQL, MariaDB, MySQL,
 * H2) through a small HikariCP pool and {@link JdbiOutboxStore}, or a MongoDB URI through {@link
 * MongoOutboxStore}. Closing it closes the pool or the client.
 *
 * <p>The dialect of a JDBC store follows the URL's scheme ({@code jdbc:postgresql:}, {@code
 * jdbc:mariadb:}, {@code jdbc:mysql:}, {@code jdbc:h2:}), so opening needs no connection: a relay
 * can start while its database is down and report itself not ready.
 */
public final class StoreConnection implements AutoCloseable {
    /** The JDBC URL or MongoDB URI. */
    public static final String URL = "store.url";

    /** The database user (JDBC; for MongoDB put credentials in the URI). */
    public static final String USER = "store.user";

    /** The database password. */
    public static final String PASSWORD = "store.password";

    /** The outbox table (JDBC) or collection (MongoDB). */
    public static final String TABLE = "store.table";

    /** The MongoDB database, when the URI names none. */
    public static final String DATABASE = "store.database";

    /** How many connections the JDBC pool keeps at most. */
    public static final String POOL_SIZE = "store.pool-size";

    /** How long to wait for a connection (JDBC) or a server (MongoDB). */
    public static final String CONNECT_TIMEOUT = "store.connect-timeout";

    /** Every {@code store.*} key. */
    public static final List<String> KEYS =
            List.of(URL, USER, PASSWORD, TABLE, DATABASE, POOL_SIZE, CONNECT_TIMEOUT);

    /** The connect timeout when none is set. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final OutboxStore store;
    private final String description;
    private final AutoCloseable resource;
    private final Runnable createSchema;

    private StoreConnection(
            OutboxStore store, String description, AutoCloseable resource, Runnable createSchema) {
        this.store = store;
        this.description = description;
        this.resource = resource;
        this.createSchema = createSchema;
    }

    /**
     * Checks the {@code store.*} settings without connecting.
     *
     * @param settings the settings
     * @return the store URL
     * @throws SettingsException if the URL is missing or not a supported kind
     */
    public static String checkUrl(Settings settings) {
        String url =
                settings.required(
                        URL,
                        "give a JDBC URL (jdbc:postgresql://host:5432/db, jdbc:mariadb://…, jdbc:mysql://…, "
                                + "jdbc:h2:…) or a MongoDB URI (mongodb://host:27017/db)");
        kind(url, settings.source(URL));
        return url;
    }

    /**
     * Opens the store the settings name.
     *
     * @param settings the {@code store.*} settings
     * @param defaultPoolSize the JDBC pool size when {@code store.pool-size} is not set
     * @param failFast whether a JDBC store must connect now ({@code true} for the command-line
     *     tool) or may start without its database (the relay: it retries and reports itself not
     *     ready)
     * @return the open store
     * @throws SettingsException if a setting is missing or malformed
     * @throws RuntimeException the driver's own failure if {@code failFast} and it cannot connect
     */
    public static StoreConnection open(Settings settings, int defaultPoolSize, boolean failFast) {
        String url = checkUrl(settings);
        String table = settings.text(TABLE).orElse(JdbiOutboxStore.DEFAULT_TABLE_NAME);
        Duration connectTimeout =
                settings.duration(CONNECT_TIMEOUT, Duration.ofMillis(250), Duration.ofMinutes(10))
                        .orElse(DEFAULT_CONNECT_TIMEOUT);
        String kind = kind(url, settings.source(URL));
        if (kind.equals("mongodb")) {
            return openMongo(settings, url, table, connectTimeout);
        }
        int poolSize = settings.integer(POOL_SIZE, defaultPoolSize, 1, 200);
        return openJdbc(settings, url, kind, table, poolSize, connectTimeout, failFast);
    }

    private static String kind(String url, String source) {
        String lower = url.toLowerCase(Locale.ROOT);
        for (String k : List.of("postgresql", "mariadb", "mysql", "h2")) {
            if (lower.startsWith("jdbc:" + k + ":")) {
                return k;
            }
        }
        if (lower.startsWith("mongodb://") || lower.startsWith("mongodb+srv://")) {
            return "mongodb";
        }
        throw new SettingsException(
                URL
                        + " must start with jdbc:postgresql:, jdbc:mariadb:, jdbc:mysql:, jdbc:h2:, mongodb:// or"
                        + " mongodb+srv://, but was '"
                        + mask(url)
                        + "' ("
                        + source
                        + ")");
    }

    private static StoreConnection openJdbc(
            Settings settings,
            String url,
            String kind,
            String table,
            int poolSize,
            Duration connectTimeout,
            boolean failFast) {
        JdbiOutboxStore.Dialect dialect;
        String jdbcUrl = url;
        switch (kind) {
            case "postgresql" -> dialect = JdbiOutboxStore.Dialect.POSTGRESQL;
            case "mariadb" -> dialect = JdbiOutboxStore.Dialect.MARIADB;
            case "mysql" -> {
                // MariaDB Connector/J speaks to MySQL too; it takes the jdbc:mariadb: scheme.
                dialect = JdbiOutboxStore.Dialect.MYSQL;
                jdbcUrl = "jdbc:mariadb:" + url.substring("jdbc:mysql:".length());
            }
            default -> dialect = JdbiOutboxStore.Dialect.H2;
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        settings.text(USER).ifPresent(config::setUsername);
        settings.text(PASSWORD).ifPresent(config::setPassword);
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(Math.min(poolSize, 1));
        config.setPoolName("outbox4j-store");
        config.setConnectionTimeout(Math.max(250, connectTimeout.toMillis()));
        config.setValidationTimeout(Math.max(250, Math.min(5000, connectTimeout.toMillis())));
        config.setInitializationFailTimeout(failFast ? 1 : -1);
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(config);
        } catch (RuntimeException e) {
            throw new CannotConnectException(
                    "cannot connect to " + mask(url) + ": " + rootMessage(e), e);
        }
        try {
            JdbiOutboxStore store =
                    JdbiOutboxStore.builder(Jdbi.create(dataSource))
                            .dialect(dialect)
                            .tableName(checkTable(table, settings))
                            .build();
            String description = dialect + " " + mask(url) + " table " + table;
            return new StoreConnection(store, description, dataSource, store::createSchemaIfAbsent);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    private static String checkTable(String table, Settings settings) {
        if (!table.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
            throw new SettingsException(
                    TABLE
                            + " must be a plain identifier ([A-Za-z_][A-Za-z0-9_]{0,62}), but was '"
                            + table
                            + "' ("
                            + settings.source(TABLE)
                            + ")");
        }
        return table;
    }

    private static StoreConnection openMongo(
            Settings settings, String uri, String collection, Duration connectTimeout) {
        ConnectionString cs;
        try {
            cs = new ConnectionString(uri);
        } catch (IllegalArgumentException e) {
            throw new SettingsException(
                    URL
                            + " is not a valid MongoDB URI: '"
                            + mask(uri)
                            + "' ("
                            + e.getMessage()
                            + ")");
        }
        String database =
                settings.text(DATABASE)
                        .or(() -> java.util.Optional.ofNullable(cs.getDatabase()))
                        .orElseThrow(
                                () ->
                                        new SettingsException(
                                                "the MongoDB database is not set: name it in the URI"
                                                        + " (mongodb://host:27017/mydb) or set "
                                                        + DATABASE));
        MongoClientSettings.Builder b = MongoClientSettings.builder().applyConnectionString(cs);
        long ms = connectTimeout.toMillis();
        if (cs.getServerSelectionTimeout() == null) {
            b.applyToClusterSettings(c -> c.serverSelectionTimeout(ms, TimeUnit.MILLISECONDS));
        }
        if (cs.getConnectTimeout() == null) {
            b.applyToSocketSettings(s -> s.connectTimeout(ms, TimeUnit.MILLISECONDS));
        }
        MongoClient client = MongoClients.create(b.build());
        try {
            MongoOutboxStore store =
                    MongoOutboxStore.builder()
                            .client(client)
                            .database(database)
                            .collection(collection)
                            .build();
            String description =
                    "MongoDB " + mask(uri) + " database " + database + " collection " + collection;
            return new StoreConnection(store, description, client, store::createIndexes);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * The dispatch side, for a relay.
     *
     * @return the store
     */
    public OutboxStore store() {
        return store;
    }

    /**
     * The operator's side.
     *
     * @return the store's admin port
     * @throws IllegalStateException if this store has none
     */
    public OutboxAdmin admin() {
        if (store instanceof OutboxAdmin a) {
            return a;
        }
        throw new IllegalStateException(
                store.getClass().getSimpleName() + " does not implement OutboxAdmin");
    }

    /**
     * Creates the table and indexes (JDBC) or the indexes (MongoDB) unless they exist.
     *
     * @throws RuntimeException the store's failure
     */
    public void createSchema() {
        createSchema.run();
    }

    /**
     * Says which store this is, without passwords.
     *
     * @return e.g. {@code POSTGRESQL jdbc:postgresql://db:5432/app table outbox_message}
     */
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        try {
            resource.close();
        } catch (Exception e) {
            // closing anyway; nothing to give back
        }
    }

    /**
     * Hides passwords in a URL: {@code user:secret@} and {@code password=secret} parameters.
     *
     * @param url the URL
     * @return the URL with every password replaced by {@code ***}
     */
    public static String mask(String url) {
        return url.replaceAll("(?<=://)([^@/?]*):[^@/?]*@", "$1:***@")
                .replaceAll("(?i)(password|pwd)=[^&;]*", "$1=***");
    }

    /**
     * The innermost message of a failure chain, which is where drivers put the useful part.
     *
     * @param e the failure
     * @return its root cause's message, or its class name
     */
    public static String rootMessage(Throwable e) {
        Throwable t = e;
        String message = e.getMessage();
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
            if (t.getMessage() != null) {
                message = t.getMessage();
            }
        }
        return message == null ? e.getClass().getSimpleName() : message;
    }
}
