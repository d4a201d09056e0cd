package io.outbox4j.kafka.connect;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.util.Arrays;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Range;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;
import org.jdbi.v3.core.Jdbi;
import org.jspecify.annotations.Nullable;

/**
 * The settings of {@link OutboxSourceConnector}: their names, defaults and the {@link ConfigDef}
 * that validates them. The README's configuration table lists the same names and defaults.
 */
public final class OutboxSourceConnectorConfig {
    private static final String GROUP_STORE = "Outbox store";
    private static final String GROUP_TOPICS = "Topics";
    private static final String GROUP_DISPATCH = "Dispatch";

    /** JDBC URL of the database holding the outbox table (required). */
    public static final String JDBC_URL = "outbox.jdbc.url";

    /** Database user. */
    public static final String JDBC_USER = "outbox.jdbc.user";

    /** Database password. */
    public static final String JDBC_PASSWORD = "outbox.jdbc.password";

    /** Name of the outbox table. */
    public static final String TABLE = "outbox.table";

    /** The default outbox table name, the store's own default. */
    public static final String DEFAULT_TABLE = JdbiOutboxStore.DEFAULT_TABLE_NAME;

    /** SQL dialect of the database; empty means detected from the connection. */
    public static final String DIALECT = "outbox.dialect";

    /** The default dialect: empty, detected from the connection's metadata. */
    public static final String DEFAULT_DIALECT = "";

    /** When set, every record goes to this one Kafka topic. */
    public static final String TOPIC_FIXED = "topic.fixed";

    /**
     * A regular expression matched against the whole message topic; where it matches, the topic is
     * replaced by {@link #TOPIC_REPLACEMENT}.
     */
    public static final String TOPIC_REGEX = "topic.regex";

    /** The replacement for {@link #TOPIC_REGEX} ({@code $1} refers to the first group). */
    public static final String TOPIC_REPLACEMENT = "topic.replacement";

    /** A prefix put before the (possibly replaced) message topic. */
    public static final String TOPIC_PREFIX = "topic.prefix";

    /** How many messages one claim leases at most. */
    public static final String BATCH_SIZE = "batch.size";

    /** The default claim batch size. */
    public static final int DEFAULT_BATCH_SIZE = 200;

    /** How many messages a task holds at most that Kafka has not acknowledged yet. */
    public static final String MAX_IN_FLIGHT = "max.in.flight.messages";

    /** The default bound on unacknowledged messages per task. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 5_000;

    /** How long a task waits when nothing is claimable before it polls the store again. */
    public static final String POLL_INTERVAL_MS = "poll.interval.ms";

    /** The default idle poll interval in milliseconds. */
    public static final long DEFAULT_POLL_INTERVAL_MS = 500;

    /**
     * How long a claimed message stays leased to its task; the task renews the leases of messages
     * Kafka has not acknowledged yet every third of it, so this bounds the redelivery delay after a
     * task dies.
     */
    public static final String LEASE_MS = "lease.ms";

    /** The default lease in milliseconds. */
    public static final long DEFAULT_LEASE_MS = 30_000;

    /**
     * How often acknowledged messages are completed in the store (one write per batch); a full
     * batch ({@link #BATCH_SIZE}) of acknowledgements is completed at once.
     */
    public static final String COMPLETION_INTERVAL_MS = "completion.interval.ms";

    /** The default completion interval in milliseconds. */
    public static final long DEFAULT_COMPLETION_INTERVAL_MS = 100;

    /**
     * How many times a message may be claimed without Kafka acknowledging it before the task
     * dead-letters it (0: never).
     */
    public static final String MAX_ATTEMPTS = "max.attempts";

    /** The default attempt limit. */
    public static final int DEFAULT_MAX_ATTEMPTS = 10;

    /** The longest allowed lease, the store port's safety bound. */
    static final long MAX_LEASE_MS = 30 * 60 * 1000L;

    private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    private OutboxSourceConnectorConfig() {}

    /**
     * Returns the definition of every setting, with types, defaults, ranges and documentation.
     *
     * @return a new {@link ConfigDef}
     */
    public static ConfigDef configDef() {
        int order = 0;
        ConfigDef def = new ConfigDef();
        def.define(
                JDBC_URL,
                ConfigDef.Type.STRING,
                ConfigDef.NO_DEFAULT_VALUE,
                new JdbcUrl(),
                Importance.HIGH,
                "JDBC URL of the database that holds the outbox table, e.g."
                        + " jdbc:postgresql://db:5432/app. PostgreSQL and MariaDB/MySQL drivers"
                        + " ship with the plugin.",
                GROUP_STORE,
                ++order,
                Width.LONG,
                "JDBC URL");
        def.define(
                JDBC_USER,
                ConfigDef.Type.STRING,
                "",
                Importance.HIGH,
                "Database user.",
                GROUP_STORE,
                ++order,
                Width.MEDIUM,
                "User");
        def.define(
                JDBC_PASSWORD,
                ConfigDef.Type.PASSWORD,
                "",
                Importance.HIGH,
                "Database password.",
                GROUP_STORE,
                ++order,
                Width.MEDIUM,
                "Password");
        def.define(
                TABLE,
                ConfigDef.Type.STRING,
                DEFAULT_TABLE,
                new TableName(),
                Importance.MEDIUM,
                "Name of the outbox table (case-sensitive, "
                        + TABLE_NAME.pattern()
                        + "), as created from store-jdbi's DDL.",
                GROUP_STORE,
                ++order,
                Width.MEDIUM,
                "Table");
        def.define(
                DIALECT,
                ConfigDef.Type.STRING,
                DEFAULT_DIALECT,
                new DialectName(),
                Importance.LOW,
                "SQL dialect: one of " + dialectNames() + "; empty to detect it from the database.",
                GROUP_STORE,
                ++order,
                Width.SHORT,
                "Dialect");
        order = 0;
        def.define(
                TOPIC_FIXED,
                ConfigDef.Type.STRING,
                null,
                new TopicName(),
                Importance.MEDIUM,
                "Send every message to this Kafka topic. Default: the message's own topic"
                        + " (after "
                        + TOPIC_REGEX
                        + " and "
                        + TOPIC_PREFIX
                        + ").",
                GROUP_TOPICS,
                ++order,
                Width.MEDIUM,
                "Fixed topic");
        def.define(
                TOPIC_REGEX,
                ConfigDef.Type.STRING,
                null,
                new RegexValidator(),
                Importance.LOW,
                "A regular expression matched against the whole message topic; where it matches,"
                        + " the Kafka topic is "
                        + TOPIC_REPLACEMENT
                        + " ($1 refers to its first group).",
                GROUP_TOPICS,
                ++order,
                Width.MEDIUM,
                "Topic regex");
        def.define(
                TOPIC_REPLACEMENT,
                ConfigDef.Type.STRING,
                null,
                Importance.LOW,
                "The replacement for " + TOPIC_REGEX + "; required with it.",
                GROUP_TOPICS,
                ++order,
                Width.MEDIUM,
                "Topic replacement");
        def.define(
                TOPIC_PREFIX,
                ConfigDef.Type.STRING,
                "",
                Importance.LOW,
                "A prefix put before the message topic.",
                GROUP_TOPICS,
                ++order,
                Width.SHORT,
                "Topic prefix");
        order = 0;
        def.define(
                BATCH_SIZE,
                ConfigDef.Type.INT,
                DEFAULT_BATCH_SIZE,
                Range.between(1, ClaimRequest.MAX_LIMIT),
                Importance.MEDIUM,
                "How many messages one claim leases at most.",
                GROUP_DISPATCH,
                ++order,
                Width.SHORT,
                "Batch size");
        def.define(
                MAX_IN_FLIGHT,
                ConfigDef.Type.INT,
                DEFAULT_MAX_IN_FLIGHT,
                Range.between(1, 1_000_000),
                Importance.LOW,
                "How many messages a task holds at most that Kafka has not acknowledged yet;"
                        + " it claims no more until acknowledgements come back.",
                GROUP_DISPATCH,
                ++order,
                Width.SHORT,
                "Max in-flight messages");
        def.define(
                POLL_INTERVAL_MS,
                ConfigDef.Type.LONG,
                DEFAULT_POLL_INTERVAL_MS,
                Range.between(1, 3_600_000),
                Importance.MEDIUM,
                "How long a task waits when nothing is claimable before it asks the store again"
                        + " (it asks at once when a completion may have unblocked a key).",
                GROUP_DISPATCH,
                ++order,
                Width.SHORT,
                "Poll interval (ms)");
        def.define(
                LEASE_MS,
                ConfigDef.Type.LONG,
                DEFAULT_LEASE_MS,
                Range.between(1_000, MAX_LEASE_MS),
                Importance.MEDIUM,
                "How long a claimed message stays leased to its task. The task renews the leases"
                        + " of messages Kafka has not acknowledged every third of it, so this"
                        + " bounds how late a message of a stopped or failed task is redelivered.",
                GROUP_DISPATCH,
                ++order,
                Width.SHORT,
                "Lease (ms)");
        def.define(
                COMPLETION_INTERVAL_MS,
                ConfigDef.Type.LONG,
                DEFAULT_COMPLETION_INTERVAL_MS,
                Range.between(1, 60_000),
                Importance.LOW,
                "How often messages acknowledged by Kafka are completed in the store, one write"
                        + " per batch; a full batch is completed at once.",
                GROUP_DISPATCH,
                ++order,
                Width.SHORT,
                "Completion interval (ms)");
        def.define(
                MAX_ATTEMPTS,
                ConfigDef.Type.INT,
                DEFAULT_MAX_ATTEMPTS,
                Range.atLeast(0),
                Importance.LOW,
                "How many times a message may be claimed without Kafka acknowledging it (its"
                        + " task failed or stopped each time) before it is dead-lettered in the"
                        + " store instead of sent again; 0 never dead-letters.",
                GROUP_DISPATCH,
                ++order,
                Width.SHORT,
                "Max attempts");
        return def;
    }

    static String dialectNames() {
        return Arrays.stream(JdbiOutboxStore.Dialect.values())
                .map(Enum::name)
                .collect(Collectors.joining(", "));
    }

    /** Parses a dialect name case-insensitively; empty means detect. */
    static JdbiOutboxStore.@Nullable Dialect dialect(String name) {
        String n = name.trim();
        if (n.isEmpty()) {
            return null;
        }
        try {
            return JdbiOutboxStore.Dialect.valueOf(n.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(
                    DIALECT, name, "must be empty (detect) or one of " + dialectNames());
        }
    }

    /** A legal Kafka topic name: 1–249 of {@code [a-zA-Z0-9._-]}, not "." or "..". */
    static @Nullable String topicNameProblem(String topic) {
        if (topic.isEmpty()) {
            return "is empty";
        }
        if (topic.length() > 249) {
            return "is " + topic.length() + " characters long, over Kafka's limit of 249";
        }
        if (topic.equals(".") || topic.equals("..")) {
            return "cannot be '.' or '..'";
        }
        for (int i = 0; i < topic.length(); i++) {
            char c = topic.charAt(i);
            boolean legal =
                    (c >= 'a' && c <= 'z')
                            || (c >= 'A' && c <= 'Z')
                            || (c >= '0' && c <= '9')
                            || c == '.'
                            || c == '_'
                            || c == '-';
            if (!legal) {
                return "contains '" + c + "'; Kafka topic names use only [a-zA-Z0-9._-]";
            }
        }
        return null;
    }

    private static final class JdbcUrl implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, @Nullable Object value) {
            String url = value == null ? "" : value.toString().trim();
            if (url.isEmpty()) {
                throw new ConfigException(name, value, "must be set to the database's JDBC URL");
            }
            if (!url.startsWith("jdbc:")) {
                throw new ConfigException(
                        name, Redact.url(url), "must start with 'jdbc:' (a JDBC URL)");
            }
        }

        @Override
        public String toString() {
            return "a JDBC URL (jdbc:...)";
        }
    }

    private static final class TableName implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, @Nullable Object value) {
            if (value == null) {
                throw new ConfigException(name, null, "the outbox table must be set");
            }
            try {
                // The store's own check, so the two can never disagree; no connection is opened.
                JdbiOutboxStore.builder(Jdbi.create("jdbc:unused:")).tableName(value.toString());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(name, value, e.getMessage());
            }
        }

        @Override
        public String toString() {
            return TABLE_NAME.pattern();
        }
    }

    private static final class DialectName implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, @Nullable Object value) {
            dialect(value == null ? "" : value.toString());
        }

        @Override
        public String toString() {
            return "empty or one of " + dialectNames();
        }
    }

    private static final class TopicName implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, @Nullable Object value) {
            if (value == null) {
                return;
            }
            String problem = topicNameProblem(value.toString());
            if (problem != null) {
                throw new ConfigException(
                        name, value, "is not a legal Kafka topic name: " + problem);
            }
        }

        @Override
        public String toString() {
            return "a Kafka topic name";
        }
    }

    private static final class RegexValidator implements ConfigDef.Validator {
        @Override
        public void ensureValid(String name, @Nullable Object value) {
            if (value == null) {
                return;
            }
            try {
                Pattern.compile(value.toString());
            } catch (PatternSyntaxException e) {
                throw new ConfigException(
                        name, value, "is not a valid regular expression: " + e.getDescription());
            }
        }

        @Override
        public String toString() {
            return "a Java regular expression";
        }
    }
}
