package io.outbox4j.kafka.connect;

import static io.outbox4j.kafka.connect.OutboxSourceConnectorConfig.*;

import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigException;
import org.jspecify.annotations.Nullable;

/** The connector's settings, parsed and checked. */
record Settings(
        String connectorName,
        String jdbcUrl,
        String user,
        String password,
        String table,
        JdbiOutboxStore.@Nullable Dialect dialect,
        TopicMapper topics,
        int batchSize,
        int maxInFlight,
        Duration pollInterval,
        Duration lease,
        Duration completionInterval,
        int maxAttempts) {

    /** Producer overrides (connector-level) that decide whether per-key order survives retries. */
    static final String ACKS_OVERRIDE = "producer.override.acks";

    static final String IDEMPOTENCE_OVERRIDE = "producer.override.enable.idempotence";
    static final String IN_FLIGHT_OVERRIDE =
            "producer.override.max.in.flight.requests.per.connection";

    /**
     * Parses the connector's (or a task's) configuration.
     *
     * @throws ConfigException naming the first bad setting
     */
    static Settings parse(Map<String, String> props) {
        AbstractConfig c = new AbstractConfig(configDef(), props, false);
        Map<String, String> problems = crossCheck(props);
        if (!problems.isEmpty()) {
            Map.Entry<String, String> first = problems.entrySet().iterator().next();
            throw new ConfigException(first.getKey() + " " + first.getValue());
        }
        String regex = c.getString(TOPIC_REGEX);
        return new Settings(
                props.getOrDefault("name", "outbox"),
                c.getString(JDBC_URL).trim(),
                c.getString(JDBC_USER),
                c.getPassword(JDBC_PASSWORD).value(),
                c.getString(TABLE),
                OutboxSourceConnectorConfig.dialect(c.getString(DIALECT)),
                new TopicMapper(
                        c.getString(TOPIC_FIXED),
                        regex == null ? null : Pattern.compile(regex),
                        c.getString(TOPIC_REPLACEMENT),
                        c.getString(TOPIC_PREFIX)),
                c.getInt(BATCH_SIZE),
                c.getInt(MAX_IN_FLIGHT),
                Duration.ofMillis(c.getLong(POLL_INTERVAL_MS)),
                Duration.ofMillis(c.getLong(LEASE_MS)),
                Duration.ofMillis(c.getLong(COMPLETION_INTERVAL_MS)),
                c.getInt(MAX_ATTEMPTS));
    }

    /**
     * Checks what single settings cannot: combinations, and the producer overrides that would break
     * per-key order or acknowledge too early.
     *
     * @return setting name to problem (a phrase that follows the name), in a stable order
     */
    static Map<String, String> crossCheck(Map<String, String> props) {
        Map<String, String> problems = new LinkedHashMap<>();
        String fixed = props.get(TOPIC_FIXED);
        String regex = props.get(TOPIC_REGEX);
        String replacement = props.get(TOPIC_REPLACEMENT);
        String prefix = props.get(TOPIC_PREFIX);
        if (fixed != null && (regex != null || (prefix != null && !prefix.isEmpty()))) {
            problems.put(
                    TOPIC_FIXED,
                    "cannot be combined with "
                            + TOPIC_REGEX
                            + " or "
                            + TOPIC_PREFIX
                            + ": a fixed topic ignores the message topic");
        }
        if (regex != null && replacement == null) {
            problems.put(
                    TOPIC_REPLACEMENT,
                    "must be set when " + TOPIC_REGEX + " is set ('" + regex + "')");
        }
        if (replacement != null && regex == null) {
            problems.put(TOPIC_REGEX, "must be set when " + TOPIC_REPLACEMENT + " is set");
        }
        String acks = props.get(ACKS_OVERRIDE);
        if (acks != null && !acks.trim().equals("all") && !acks.trim().equals("-1")) {
            problems.put(
                    ACKS_OVERRIDE,
                    "must be 'all' (or left unset), but was '"
                            + acks
                            + "': the connector completes a message when Kafka acknowledges its"
                            + " record, so an acknowledgement must mean every in-sync replica has it");
        }
        String inFlight = props.get(IN_FLIGHT_OVERRIDE);
        if (inFlight != null) {
            int n;
            try {
                n = Integer.parseInt(inFlight.trim());
            } catch (NumberFormatException e) {
                n = Integer.MAX_VALUE;
            }
            String idempotence = props.get(IDEMPOTENCE_OVERRIDE);
            if (n > 5) {
                problems.put(
                        IN_FLIGHT_OVERRIDE,
                        "must be at most 5, but was '"
                                + inFlight
                                + "': with more requests in flight a retried batch can land after"
                                + " a later one, and messages of one key lose their order");
            } else if (n > 1 && (idempotence == null || !idempotence.trim().equals("true"))) {
                problems.put(
                        IN_FLIGHT_OVERRIDE,
                        "is "
                                + n
                                + " but "
                                + IDEMPOTENCE_OVERRIDE
                                + " is not 'true': Connect's producer is not idempotent by"
                                + " default, and a retried batch can then land after a later one;"
                                + " set "
                                + IDEMPOTENCE_OVERRIDE
                                + "=true or leave this at 1");
            }
        }
        return problems;
    }

    @Override
    public String toString() {
        // Never the password.
        return "Settings[connector="
                + connectorName
                + ", database="
                + Redact.url(jdbcUrl)
                + ", table="
                + table
                + ", dialect="
                + (dialect == null ? "detected" : dialect)
                + ", topics="
                + topics
                + ", batchSize="
                + batchSize
                + ", maxInFlight="
                + maxInFlight
                + ", pollInterval="
                + pollInterval
                + ", lease="
                + lease
                + ", completionInterval="
                + completionInterval
                + ", maxAttempts="
                + maxAttempts
                + "]";
    }
}
