package io.outbox4j.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.cli.internal.Settings;
import io.outbox4j.cli.internal.SettingsException;
import io.outbox4j.engine.Relay;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Settings of the standalone relay: where they come from, and what a bad one says. */
class RelayConfigTest {
    @TempDir Path dir;

    private static final String MINIMAL =
            "store.url=jdbc:postgresql://db:5432/app\npublisher.uri=kafka://kafka:9092\n";

    private Path file(String text) throws IOException {
        Path f = dir.resolve("relay.properties");
        Files.writeString(f, text, StandardCharsets.UTF_8);
        return f;
    }

    private RelayConfig config(String text, Map<String, String> env) throws IOException {
        return RelayConfig.of(Settings.load(file(text), env));
    }

    @Test
    void defaultsAreTheEngines() throws IOException {
        RelayConfig c = config(MINIMAL, Map.of());
        assertThat(c.batchSize).isEqualTo(Relay.DEFAULT_BATCH_SIZE);
        assertThat(c.workers).isEqualTo(Relay.DEFAULT_WORKERS);
        assertThat(c.lease).isEqualTo(Relay.DEFAULT_LEASE);
        assertThat(c.deliveryTimeout).isEqualTo(Relay.DEFAULT_DELIVERY_TIMEOUT);
        assertThat(c.pollInterval).isEqualTo(Relay.DEFAULT_POLL_INTERVAL);
        assertThat(c.shutdownTimeout).isEqualTo(Relay.DEFAULT_SHUTDOWN_TIMEOUT);
        assertThat(c.maxAttempts).isEqualTo(Relay.DEFAULT_MAX_ATTEMPTS);
        assertThat(c.httpPort).isEqualTo(RelayConfig.DEFAULT_HTTP_PORT);
        assertThat(c.owner).isEmpty();
    }

    @Test
    void theEnvironmentWinsOverTheFile() throws IOException {
        RelayConfig c =
                config(
                        MINIMAL + "relay.batch-size=5\nrelay.poll-interval=2s\n",
                        Map.of("OUTBOX4J_RELAY_BATCH_SIZE", "7"));
        assertThat(c.batchSize).isEqualTo(7);
        assertThat(c.pollInterval).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void theEnvironmentAloneIsEnough() {
        Map<String, String> env = new HashMap<>();
        env.put("OUTBOX4J_STORE_URL", "mongodb://mongo:27017/app");
        env.put("OUTBOX4J_PUBLISHER_URI", "amqp://guest:guest@rabbit:5672/");
        env.put("OUTBOX4J_RELAY_LEASE", "PT20S");
        env.put("OUTBOX4J_POSTGRES_URL", "jdbc:postgresql://unrelated"); // the tests' own: ignored
        RelayConfig c = RelayConfig.of(Settings.fromEnvironment(env));
        assertThat(c.lease).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void kafkaProducerPropertiesPassThrough_fromTheFileAndTheEnvironment() throws IOException {
        RelayConfig c =
                config(
                        MINIMAL + "publisher.kafka.linger.ms=5\n",
                        Map.of("OUTBOX4J_PUBLISHER_KAFKA_COMPRESSION_TYPE", "lz4"));
        assertThat(c.settings.passthrough(RelayConfig.PUBLISHER_KAFKA))
                .containsEntry("linger.ms", "5")
                .containsEntry("compression.type", "lz4");
    }

    @Test
    void anUnknownKey_isRejectedNamingItAndItsSource() {
        assertThatThrownBy(() -> config(MINIMAL + "relay.batchsize=5\n", Map.of()))
                .isInstanceOf(SettingsException.class)
                .hasMessageContaining("unknown setting relay.batchsize (")
                .hasMessageContaining("relay.properties")
                .hasMessageContaining("relay.batch-size");
        assertThatThrownBy(() -> config(MINIMAL, Map.of("OUTBOX4J_RELAY_BATCHSIZE", "5")))
                .isInstanceOf(SettingsException.class)
                .hasMessageContaining("OUTBOX4J_RELAY_BATCHSIZE (environment)");
    }

    @Test
    void aBadValue_namesTheKeyTheValueItsSourceAndWhatIsAllowed() {
        assertThatThrownBy(() -> config(MINIMAL + "relay.batch-size=0\n", Map.of()))
                .hasMessage(
                        "relay.batch-size must be a whole number between 1 and 10000, but was '0' ("
                                + dir.resolve("relay.properties")
                                + ")");
        assertThatThrownBy(() -> config(MINIMAL, Map.of("OUTBOX4J_RELAY_WORKERS", "four")))
                .hasMessageContaining("relay.workers must be a whole number")
                .hasMessageContaining("'four' (environment variable OUTBOX4J_RELAY_WORKERS)");
        assertThatThrownBy(() -> config(MINIMAL + "relay.poll-interval=30\n", Map.of()))
                .hasMessageContaining("relay.poll-interval must be a duration")
                .hasMessageContaining("such as 500ms, 30s, 5m");
        assertThatThrownBy(() -> config(MINIMAL + "relay.lease=500ms\n", Map.of()))
                .hasMessageContaining("relay.lease must be a duration between 1s and 30m");
        assertThatThrownBy(
                        () ->
                                config(
                                        MINIMAL + "relay.backoff-base=1m\nrelay.backoff-max=10s\n",
                                        Map.of()))
                .hasMessageContaining("relay.backoff-max (10s) must not be shorter than");
        assertThatThrownBy(() -> config(MINIMAL + "store.create-schema=yes\n", Map.of()))
                .hasMessageContaining("store.create-schema must be true or false");
    }

    @Test
    void missingOrMalformedStoreAndPublisher_sayWhatToGive() {
        assertThatThrownBy(() -> config("publisher.uri=kafka://k:9092\n", Map.of()))
                .hasMessageStartingWith("store.url is not set; give a JDBC URL")
                .hasMessageContaining("OUTBOX4J_STORE_URL");
        assertThatThrownBy(() -> config("store.url=jdbc:postgresql://db/app\n", Map.of()))
                .hasMessageStartingWith("publisher.uri is not set; give kafka://");
        assertThatThrownBy(
                        () ->
                                config(
                                        "store.url=jdbc:oracle:thin:@db\npublisher.uri=kafka://k:9092\n",
                                        Map.of()))
                .hasMessageContaining("store.url must start with jdbc:postgresql:");
        assertThatThrownBy(
                        () ->
                                config(
                                        """
                                        store.url=jdbc:postgresql://db/app?password=hunter2
                                        publisher.uri=nats://n:4222
                                        """,
                                        Map.of()))
                .hasMessageContaining("publisher.uri must start with kafka://")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(
                        () ->
                                config(
                                        "store.url=jdbc:postgresql://db/app\npublisher.uri=kafka://kafka\n",
                                        Map.of()))
                .hasMessageContaining("must list host:port pairs");
        assertThatThrownBy(
                        () ->
                                config(
                                        """
                                        store.url=jdbc:postgresql://db/app
                                        publisher.uri=amqp://r:5672
                                        publisher.kafka.acks=1
                                        """,
                                        Map.of()))
                .hasMessageContaining("apply to a kafka:// publisher only");
    }

    @Test
    void kafkaBootstrapListAndSqsEndpoints_areReadFromTheUri() {
        assertThat(Publishers.bootstrap("kafka://a:9092,b:9093/")).isEqualTo("a:9092,b:9093");
        assertThat(Publishers.sqsEndpoint("sqs://localhost:9324"))
                .hasValueSatisfying(u -> assertThat(u).hasToString("http://localhost:9324"));
        assertThat(Publishers.sqsEndpoint("sqs+https://sqs.eu-west-1.amazonaws.com"))
                .hasValueSatisfying(
                        u -> assertThat(u).hasToString("https://sqs.eu-west-1.amazonaws.com"));
        assertThat(Publishers.sqsEndpoint("sqs://aws")).isEmpty();
    }

    private record Run(int exit, String out, String err) {}

    private static Run run(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit =
                OutboxRelay.run(
                        args,
                        env,
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(
                exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theConsoleIsOffAndReadOnlyUnlessEnabled_andWritesNeedCredentials() throws IOException {
        RelayConfig.Console off = config(MINIMAL, Map.of()).console;
        assertThat(off.enabled()).isFalse();
        assertThat(off.writeEnabled()).isFalse();
        assertThat(off.pageSize()).isEqualTo(RelayConfig.DEFAULT_CONSOLE_PAGE_SIZE);

        RelayConfig.Console on =
                config(
                                MINIMAL
                                        + "console.enabled=true\nconsole.write-enabled=true\n"
                                        + "console.user=ops\n",
                                Map.of("OUTBOX4J_CONSOLE_PASSWORD", "long-enough"))
                        .console;
        assertThat(on.writeEnabled()).isTrue();
        assertThat(on.describe())
                .contains("replay and discard enabled")
                .doesNotContain("long-enough");

        assertThatThrownBy(
                        () ->
                                config(
                                        MINIMAL
                                                + "console.enabled=true\nconsole.write-enabled=true\n",
                                        Map.of()))
                .isInstanceOf(SettingsException.class)
                .hasMessageContaining(
                        "console.write-enabled=true needs console.user and console.password");
        assertThatThrownBy(
                        () ->
                                config(
                                        MINIMAL
                                                + "console.enabled=true\nconsole.payloads-enabled=true\n",
                                        Map.of()))
                .isInstanceOf(SettingsException.class)
                .hasMessageContaining("console.payloads-enabled=true needs");
        assertThatThrownBy(
                        () ->
                                config(
                                        MINIMAL
                                                + "console.user=ops\nconsole.password=long-enough\n",
                                        Map.of()))
                .isInstanceOf(SettingsException.class)
                .hasMessageContaining("console.enabled is not true");
        assertThatThrownBy(
                        () ->
                                config(
                                        MINIMAL
                                                + "console.enabled=true\nconsole.user=ops\nconsole.password=short\n",
                                        Map.of()))
                .isInstanceOf(SettingsException.class)
                .hasMessageContaining("at least 8 characters");
        assertThatThrownBy(
                        () ->
                                config(
                                        MINIMAL + "console.enabled=true\nconsole.user=ops\n",
                                        Map.of()))
                .isInstanceOf(SettingsException.class)
                .hasMessageContaining("go together");
    }

    @Test
    void check_printsTheSettingsWithoutSecrets_andExits0() throws IOException {
        Path f =
                file(
                        """
                        store.url=jdbc:postgresql://db:5432/app?password=hunter2
                        publisher.uri=amqp://relay:s3cret@rabbit:5672/
                        relay.batch-size=64
                        console.enabled=true
                        console.user=ops
                        console.password=pa55word-x
                        """);
        Run r = run(Map.of(), "--config", f.toString(), "--check");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .contains("settings are valid")
                .contains("jdbc:postgresql://db:5432/app?password=***")
                .contains("amqp://relay:***@rabbit:5672/")
                .contains("batch-size=64")
                .doesNotContain("hunter2")
                .doesNotContain("s3cret")
                .contains("console:   /console/ read-only, basic authentication as ops")
                .doesNotContain("pa55word-x");
    }

    @Test
    void badSettingsOrArguments_exit2WithTheMessage_beforeAnythingStarts() throws IOException {
        Path f = file(MINIMAL + "relay.workers=0\n");
        Run bad = run(Map.of(), "--config", f.toString());
        assertThat(bad.exit()).isEqualTo(OutboxRelay.USAGE);
        assertThat(bad.err()).contains("outbox4j relay: relay.workers must be a whole number");

        assertThat(run(Map.of(), "--frobnicate").err()).contains("unknown argument '--frobnicate'");
        assertThat(run(Map.of(), "--config").exit()).isEqualTo(OutboxRelay.USAGE);
        assertThat(run(Map.of(), "--config", dir.resolve("missing.properties").toString()).err())
                .contains("does not exist");
        assertThat(run(Map.of(), "--check").err()).contains("store.url is not set");
        assertThat(run(Map.of("OUTBOX4J_LOG_LEVEL", "loud"), "--check").err())
                .contains("log.level must be error, warn, info, debug or trace");
    }

    @Test
    void help_listsEverySetting() {
        Run r = run(Map.of(), "--help");
        assertThat(r.exit()).isZero();
        for (String key : RelayConfig.KEYS) {
            assertThat(r.out()).as("help text").contains(key);
        }
        assertThat(r.out()).contains("publisher.kafka.*").contains("log.level");
    }
}
