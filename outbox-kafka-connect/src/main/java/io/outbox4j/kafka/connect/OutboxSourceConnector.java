package io.outbox4j.kafka.connect;

import static io.outbox4j.kafka.connect.OutboxSourceConnectorConfig.DIALECT;
import static io.outbox4j.kafka.connect.OutboxSourceConnectorConfig.JDBC_PASSWORD;
import static io.outbox4j.kafka.connect.OutboxSourceConnectorConfig.JDBC_URL;
import static io.outbox4j.kafka.connect.OutboxSourceConnectorConfig.JDBC_USER;
import static io.outbox4j.kafka.connect.OutboxSourceConnectorConfig.TABLE;

import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.jdbi.v3.core.Jdbi;
import org.jspecify.annotations.Nullable;

/**
 * A Kafka Connect source connector that relays an outbox4j outbox table (store-jdbi: PostgreSQL,
 * MariaDB/MySQL, H2) to Kafka. Each of its {@code tasks.max} tasks ({@link OutboxSourceTask})
 * claims messages through the store port, so tasks share the outbox without overlapping and keep
 * each key's order; a message is completed only once Kafka acknowledged its record. Delivery is at
 * least once; consumers deduplicate on the {@code outbox-id} header.
 *
 * <p>Settings are listed in {@link OutboxSourceConnectorConfig}. Validation ({@code PUT
 * /connector-plugins/.../config/validate}, and every create or update) checks each setting, their
 * combinations, the producer overrides that decide per-key order, and that the database answers and
 * holds the table.
 */
public class OutboxSourceConnector extends SourceConnector {
    private Map<String, String> props = Map.of();

    /** Creates the connector; the worker calls {@link #start(Map)}. */
    public OutboxSourceConnector() {}

    @Override
    public String version() {
        return Version.get();
    }

    @Override
    public void start(Map<String, String> props) {
        Settings.parse(props); // a clear ConfigException rather than failing tasks
        this.props = Map.copyOf(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return OutboxSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> out = new ArrayList<>(maxTasks);
        for (int i = 0; i < maxTasks; i++) {
            Map<String, String> task = new HashMap<>(props);
            task.put(OutboxSourceTask.TASK_INDEX, Integer.toString(i));
            out.add(task);
        }
        return out;
    }

    @Override
    public void stop() {}

    @Override
    public ConfigDef config() {
        return OutboxSourceConnectorConfig.configDef();
    }

    /** Connect's transactions are not used: delivery is at least once, deduplicated on the id. */
    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
        return ExactlyOnceSupport.UNSUPPORTED;
    }

    @Override
    public Config validate(Map<String, String> connectorConfigs) {
        Config config = super.validate(connectorConfigs);
        Map<String, ConfigValue> values = new LinkedHashMap<>();
        for (ConfigValue v : config.configValues()) {
            values.put(v.name(), v);
        }
        Settings.crossCheck(connectorConfigs)
                .forEach(
                        (name, problem) ->
                                error(values, connectorConfigs, name, name + " " + problem));
        boolean storeSettingsValid =
                List.of(JDBC_URL, JDBC_USER, JDBC_PASSWORD, TABLE, DIALECT).stream()
                        .map(values::get)
                        .allMatch(v -> v != null && v.errorMessages().isEmpty());
        if (storeSettingsValid) {
            probeDatabase(connectorConfigs, values);
        }
        return new Config(new ArrayList<>(values.values()));
    }

    /** Connects once and looks for the table, so a typo fails at creation, not in every task. */
    private static void probeDatabase(Map<String, String> props, Map<String, ConfigValue> values) {
        String url = props.getOrDefault(JDBC_URL, "").trim();
        String user = props.getOrDefault(JDBC_USER, "");
        String password = props.getOrDefault(JDBC_PASSWORD, "");
        String table = props.getOrDefault(TABLE, OutboxSourceConnectorConfig.DEFAULT_TABLE);
        Database db = new Database(url, user, password);
        JdbiOutboxStore.Dialect dialect;
        try {
            JdbiOutboxStore.Dialect configured =
                    OutboxSourceConnectorConfig.dialect(props.getOrDefault(DIALECT, ""));
            dialect =
                    configured != null
                            ? configured
                            : JdbiOutboxStore.builder(Jdbi.create(db::connect))
                                    .tableName(table)
                                    .build()
                                    .dialect();
        } catch (IllegalArgumentException e) {
            error(
                    values,
                    props,
                    DIALECT,
                    DIALECT
                            + " cannot be detected: "
                            + e.getMessage()
                            + "; set it to one of "
                            + OutboxSourceConnectorConfig.dialectNames());
            return;
        } catch (RuntimeException e) {
            error(values, props, JDBC_URL, cannotConnect(db, user, e));
            return;
        }
        char q =
                dialect == JdbiOutboxStore.Dialect.MARIADB
                                || dialect == JdbiOutboxStore.Dialect.MYSQL
                        ? '`'
                        : '"';
        Connection c;
        try {
            c = db.connect();
        } catch (SQLException e) {
            error(values, props, JDBC_URL, cannotConnect(db, user, e));
            return;
        }
        try (c;
                Statement st = c.createStatement()) {
            st.executeQuery("SELECT 1 FROM " + q + table + q + " WHERE 1 = 0").close();
        } catch (SQLException e) {
            error(
                    values,
                    props,
                    TABLE,
                    TABLE
                            + " '"
                            + table
                            + "' cannot be read in "
                            + db
                            + " ("
                            + e.getMessage()
                            + "); create it from store-jdbi's DDL ("
                            + dialect.ddlResource()
                            + ", or JdbiOutboxStore.createSchemaIfAbsent()) or fix the"
                            + " name (it is case-sensitive)");
        }
    }

    private static void error(
            Map<String, ConfigValue> values,
            Map<String, String> props,
            String name,
            String message) {
        values.computeIfAbsent(
                        name, n -> new ConfigValue(n, props.get(n), List.of(), new ArrayList<>()))
                .addErrorMessage(message);
    }

    private static String cannotConnect(Database db, String user, Exception e) {
        @Nullable Throwable cause = e;
        StringBuilder why = new StringBuilder();
        while (cause != null && why.length() < 500) {
            if (cause.getMessage() != null) {
                if (why.length() > 0) {
                    why.append(": ");
                }
                why.append(cause.getMessage());
            }
            cause = cause.getCause() == cause ? null : cause.getCause();
        }
        return JDBC_URL
                + ": cannot connect to "
                + db
                + (user.isEmpty() ? "" : " as '" + user + "'")
                + ": "
                + why;
    }
}
