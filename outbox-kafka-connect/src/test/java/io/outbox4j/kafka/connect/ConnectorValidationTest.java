package io.outbox4j.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What Connect's validation endpoint answers for good and bad configurations: each problem on the
 * setting it concerns, with a message that says what to change. The database probe runs against an
 * in-memory H2 database holding an outbox table.
 */
class ConnectorValidationTest {
    private static final String URL = "jdbc:h2:mem:connector_validation;DB_CLOSE_DELAY=-1";
    private static Connection keepAlive;

    @BeforeAll
    static void createTable() throws Exception {
        keepAlive = DriverManager.getConnection(URL);
        try (Statement st = keepAlive.createStatement()) {
            st.execute("CREATE TABLE \"outbox_message\" (id VARCHAR(255) PRIMARY KEY)");
        }
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        keepAlive.close();
    }

    private static Map<String, String> valid() {
        Map<String, String> props = new HashMap<>();
        props.put("name", "orders-outbox");
        props.put(OutboxSourceConnectorConfig.JDBC_URL, URL);
        return props;
    }

    private static Map<String, List<String>> errors(Map<String, String> props) {
        return new OutboxSourceConnector()
                .validate(props).configValues().stream()
                        .filter(v -> !v.errorMessages().isEmpty())
                        .collect(Collectors.toMap(ConfigValue::name, ConfigValue::errorMessages));
    }

    @Test
    void validConfiguration_hasNoErrors_andTheDatabaseWasProbed() {
        assertThat(errors(valid())).isEmpty();
    }

    @Test
    void missingJdbcUrl_isReportedOnIt() {
        Map<String, String> props = valid();
        props.remove(OutboxSourceConnectorConfig.JDBC_URL);
        assertThat(errors(props))
                .containsOnlyKeys(OutboxSourceConnectorConfig.JDBC_URL)
                .extractingByKey(OutboxSourceConnectorConfig.JDBC_URL)
                .asString()
                .contains("Missing required configuration");
    }

    @Test
    void urlThatIsNotJdbc_isRejectedWithoutItsSecrets() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.JDBC_URL, "postgresql://db/app?password=s3cret");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.JDBC_URL))
                .singleElement()
                .asString()
                .contains("must start with 'jdbc:'")
                .doesNotContain("s3cret");
    }

    @Test
    void unreachableDatabase_isReportedOnTheUrl() {
        Map<String, String> props = valid();
        props.put(
                OutboxSourceConnectorConfig.JDBC_URL,
                "jdbc:postgresql://127.0.0.1:1/app?connectTimeout=2");
        props.put(OutboxSourceConnectorConfig.JDBC_USER, "app");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.JDBC_URL))
                .singleElement()
                .asString()
                .startsWith(
                        "outbox.jdbc.url: cannot connect to jdbc:postgresql://127.0.0.1:1/app?...")
                .contains("as 'app'");
    }

    @Test
    void missingTable_isReportedOnTheTableWithTheDdlToRun() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TABLE, "Outbox_Message");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.TABLE))
                .singleElement()
                .asString()
                .contains("'Outbox_Message' cannot be read")
                .contains("io/outbox4j/store/jdbi/h2.sql")
                .contains("case-sensitive");
    }

    @Test
    void illegalTableName_isRejectedByTheStoresOwnRule() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TABLE, "outbox; drop table x");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.TABLE))
                .singleElement()
                .asString()
                .contains("tableName must match");
    }

    @Test
    void unknownDialect_namesTheKnownOnes() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.DIALECT, "oracle");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.DIALECT))
                .singleElement()
                .asString()
                .contains("POSTGRESQL")
                .contains("H2");
    }

    @Test
    void dialectIsCaseInsensitive() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.DIALECT, "h2");
        assertThat(errors(props)).isEmpty();
    }

    @Test
    void fixedTopicWithPrefix_isAContradiction() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TOPIC_FIXED, "events");
        props.put(OutboxSourceConnectorConfig.TOPIC_PREFIX, "app.");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.TOPIC_FIXED))
                .singleElement()
                .asString()
                .contains("cannot be combined with topic.regex or topic.prefix");
    }

    @Test
    void regexWithoutReplacement_andBrokenRegex_areReported() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TOPIC_REGEX, "orders\\.(.*)");
        assertThat(errors(props)).containsOnlyKeys(OutboxSourceConnectorConfig.TOPIC_REPLACEMENT);

        props.put(OutboxSourceConnectorConfig.TOPIC_REGEX, "orders(");
        props.put(OutboxSourceConnectorConfig.TOPIC_REPLACEMENT, "x");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.TOPIC_REGEX))
                .singleElement()
                .asString()
                .contains("not a valid regular expression");
    }

    @Test
    void illegalFixedTopic_isReported() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TOPIC_FIXED, "order events");
        assertThat(errors(props).get(OutboxSourceConnectorConfig.TOPIC_FIXED))
                .singleElement()
                .asString()
                .contains("not a legal Kafka topic name");
    }

    @Test
    void outOfRangeNumbers_areReported() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.BATCH_SIZE, "0");
        props.put(OutboxSourceConnectorConfig.LEASE_MS, "100");
        assertThat(errors(props))
                .containsOnlyKeys(
                        OutboxSourceConnectorConfig.BATCH_SIZE,
                        OutboxSourceConnectorConfig.LEASE_MS);
    }

    @Test
    void producerOverridesThatBreakKeyOrderOrAcknowledgeEarly_areRejected() {
        Map<String, String> props = valid();
        props.put("producer.override.acks", "1");
        props.put("producer.override.max.in.flight.requests.per.connection", "5");
        Map<String, List<String>> errors = errors(props);
        assertThat(errors.get("producer.override.acks"))
                .singleElement()
                .asString()
                .contains("must be 'all'");
        assertThat(errors.get("producer.override.max.in.flight.requests.per.connection"))
                .singleElement()
                .asString()
                .contains("producer.override.enable.idempotence is not 'true'");

        props.put("producer.override.max.in.flight.requests.per.connection", "6");
        props.put("producer.override.enable.idempotence", "true");
        assertThat(errors(props).get("producer.override.max.in.flight.requests.per.connection"))
                .singleElement()
                .asString()
                .contains("must be at most 5");
    }

    @Test
    void orderKeepingProducerOverrides_areAccepted() {
        Map<String, String> props = valid();
        props.put("producer.override.acks", "all");
        props.put("producer.override.enable.idempotence", "true");
        props.put("producer.override.max.in.flight.requests.per.connection", "5");
        assertThat(errors(props)).isEmpty();
    }

    @Test
    void start_failsOnAContradiction_withTheSettingNamed() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TOPIC_REPLACEMENT, "x");
        assertThatThrownBy(() -> new OutboxSourceConnector().start(props))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("topic.regex must be set when topic.replacement is set");
    }

    @Test
    void taskConfigs_giveEachTaskItsIndex() {
        OutboxSourceConnector c = new OutboxSourceConnector();
        c.start(valid());
        List<Map<String, String>> tasks = c.taskConfigs(3);
        assertThat(tasks)
                .extracting(t -> t.get(OutboxSourceTask.TASK_INDEX))
                .containsExactly("0", "1", "2");
        assertThat(tasks).allSatisfy(t -> assertThat(t).containsEntry("outbox.jdbc.url", URL));
    }

    @Test
    void settingsNeverPrintThePassword() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.JDBC_PASSWORD, "s3cret");
        assertThat(Settings.parse(props).toString()).doesNotContain("s3cret");
    }
}
