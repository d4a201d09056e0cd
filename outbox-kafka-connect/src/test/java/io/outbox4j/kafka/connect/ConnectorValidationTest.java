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
import java.util.stream.Stream;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.assertj.core.api.AbstractStringAssert;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

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

    /** The one error reported on a setting, as text to assert on. */
    private static AbstractStringAssert<?> assertThatTheOneError(
            Map<String, List<String>> errors, String setting) {
        return assertThat(errors.get(setting)).singleElement().asString();
    }

    /** Configurations Connect accepts as they are; the first is the database probe's success. */
    static Stream<Arguments> acceptedConfigurations() {
        return Stream.of(
                Arguments.of("a valid configuration, the database probed", Map.of()),
                Arguments.of(
                        "the dialect in any case",
                        Map.of(OutboxSourceConnectorConfig.DIALECT, "h2")),
                Arguments.of(
                        "producer overrides that keep key order",
                        Map.of(
                                "producer.override.acks", "all",
                                "producer.override.enable.idempotence", "true",
                                "producer.override.max.in.flight.requests.per.connection", "5")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("acceptedConfigurations")
    void accepted_hasNoErrors(String configuration, Map<String, String> settings) {
        Map<String, String> props = valid();
        props.putAll(settings);
        assertThat(errors(props)).isEmpty();
    }

    /** Values Connect refuses: the one error on the setting, with what it says to change. */
    enum Refused {
        MISSING_TABLE_WITH_THE_DDL_TO_RUN(
                OutboxSourceConnectorConfig.TABLE,
                "Outbox_Message",
                "'Outbox_Message' cannot be read",
                "io/outbox4j/store/jdbi/h2.sql",
                "case-sensitive"),
        ILLEGAL_TABLE_NAME_BY_THE_STORES_OWN_RULE(
                OutboxSourceConnectorConfig.TABLE, "outbox; drop table x", "tableName must match"),
        UNKNOWN_DIALECT_NAMING_THE_KNOWN_ONES(
                OutboxSourceConnectorConfig.DIALECT, "oracle", "POSTGRESQL", "H2"),
        ILLEGAL_FIXED_TOPIC(
                OutboxSourceConnectorConfig.TOPIC_FIXED,
                "order events",
                "not a legal Kafka topic name");

        final String setting;
        final String value;

        @SuppressWarnings("ImmutableEnumChecker") // List.of: unmodifiable
        final List<String> says;

        Refused(String setting, String value, String... says) {
            this.setting = setting;
            this.value = value;
            this.says = List.of(says);
        }
    }

    @ParameterizedTest
    @EnumSource(Refused.class)
    void refused_isReportedOnTheSetting(Refused refused) {
        Map<String, String> props = valid();
        props.put(refused.setting, refused.value);
        assertThatTheOneError(errors(props), refused.setting).contains(refused.says);
    }

    @Test
    void fixedTopicWithPrefix_isAContradiction() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TOPIC_FIXED, "events");
        props.put(OutboxSourceConnectorConfig.TOPIC_PREFIX, "app.");
        assertThatTheOneError(errors(props), OutboxSourceConnectorConfig.TOPIC_FIXED)
                .contains("cannot be combined with topic.regex or topic.prefix");
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
        assertThatTheOneError(errors(props), OutboxSourceConnectorConfig.JDBC_URL)
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
        assertThatTheOneError(errors(props), OutboxSourceConnectorConfig.JDBC_URL)
                .startsWith(
                        "outbox.jdbc.url: cannot connect to jdbc:postgresql://127.0.0.1:1/app?...")
                .contains("as 'app'");
    }

    @Test
    void regexWithoutReplacement_andBrokenRegex_areReported() {
        Map<String, String> props = valid();
        props.put(OutboxSourceConnectorConfig.TOPIC_REGEX, "orders\\.(.*)");
        assertThat(errors(props)).containsOnlyKeys(OutboxSourceConnectorConfig.TOPIC_REPLACEMENT);

        props.put(OutboxSourceConnectorConfig.TOPIC_REGEX, "orders(");
        props.put(OutboxSourceConnectorConfig.TOPIC_REPLACEMENT, "x");
        assertThatTheOneError(errors(props), OutboxSourceConnectorConfig.TOPIC_REGEX)
                .contains("not a valid regular expression");
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
        assertThatTheOneError(errors, "producer.override.acks").contains("must be 'all'");
        assertThatTheOneError(errors, "producer.override.max.in.flight.requests.per.connection")
                .contains("producer.override.enable.idempotence is not 'true'");

        props.put("producer.override.max.in.flight.requests.per.connection", "6");
        props.put("producer.override.enable.idempotence", "true");
        assertThatTheOneError(
                        errors(props), "producer.override.max.in.flight.requests.per.connection")
                .contains("must be at most 5");
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
