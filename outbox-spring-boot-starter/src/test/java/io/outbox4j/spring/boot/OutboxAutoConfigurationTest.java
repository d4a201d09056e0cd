package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox4j.api.Message;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The auto-configuration on an embedded H2 DataSource with a recording publisher: which beans
 * appear, how settings are checked, the relay woken by a commit, health and the endpoint. The
 * PostgreSQL and Kafka behaviour is {@link OutboxPostgresKafkaTest}'s.
 */
class OutboxAutoConfigurationTest {
    private final ApplicationContextRunner runner =
            StarterContexts.onH2(
                            OutboxHealthAutoConfiguration.class,
                            OutboxEndpointAutoConfiguration.class)
                    .withPropertyValues("outbox4j.store.jdbc.create-schema=true");

    private static Message message(String id) {
        return Message.builder()
                .id(id)
                .topic("orders")
                .key("c-1")
                .module("orders")
                .payload(id)
                .build();
    }

    @Test
    @DisplayName(
            "with relay.enabled=false the DataSource gives a store and a TransactionalOutbox, and no publisher is needed")
    void storeAndOutboxFromTheDataSource() {
        runner.withPropertyValues("outbox4j.relay.enabled=false")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).hasSingleBean(JdbiOutboxStore.class);
                            assertThat(context).hasSingleBean(TransactionalOutbox.class);
                            assertThat(context).doesNotHaveBean(RelayLifecycle.class);
                            assertThat(context.getBean(JdbiOutboxStore.class).dialect())
                                    .isEqualTo(JdbiOutboxStore.Dialect.H2);
                        });
    }

    @Test
    @DisplayName(
            "a commit wakes the relay: the message is published at once although the poll interval is an hour")
    void commitWakesTheRelay() {
        RecordingPublisher publisher = new RecordingPublisher();
        runner.withBean(Publisher.class, () -> publisher)
                .withPropertyValues("outbox4j.relay.poll-interval=1h")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context.getBean(RelayLifecycle.class).isRunning()).isTrue();
                            TransactionalOutbox outbox = context.getBean(TransactionalOutbox.class);
                            // the relay's first claim (at start) finds nothing; then it sleeps an
                            // hour
                            await().atMost(Duration.ofSeconds(10))
                                    .until(
                                            () ->
                                                    context.getBean(RelayLifecycle.class)
                                                            .lastClaim()
                                                            .isPresent());
                            context.getBean(TransactionTemplate.class)
                                    .executeWithoutResult(tx -> outbox.enqueue(message("m-1")));
                            await().atMost(Duration.ofSeconds(10))
                                    .until(() -> publisher.publishedIds().contains("m-1"));
                        });
    }

    @Test
    @DisplayName("a read-only transaction is refused with a message that says so")
    void readOnlyTransactionIsRefused() {
        runner.withPropertyValues("outbox4j.relay.enabled=false")
                .run(
                        context -> {
                            TransactionalOutbox outbox = context.getBean(TransactionalOutbox.class);
                            TransactionTemplate readOnly =
                                    new TransactionTemplate(
                                            context.getBean(
                                                    org.springframework.transaction
                                                            .PlatformTransactionManager.class));
                            readOnly.setReadOnly(true);
                            assertThatThrownBy(
                                            () ->
                                                    readOnly.executeWithoutResult(
                                                            tx -> outbox.enqueue(message("ro"))))
                                    .hasMessageContaining("read-only");
                        });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "outbox4j.relay.batch-size|0|must be between 1 and 10000, but was 0",
                "outbox4j.relay.workers|0|must be between 1 and 1024",
                "outbox4j.relay.lease|100ms|must be between 1s and 30m, but was 100ms",
                "outbox4j.relay.delivery-timeout|0s|must be between 1ms and 60m, but was 0s",
                "outbox4j.relay.backoff-max|10ms|must not be shorter than outbox4j.relay.backoff-base (1s)",
                "outbox4j.store.jdbc.table-name|outbox-table|tableName must match",
                "outbox4j.store.jdbc.dialect|oracle|must be one of postgresql, mariadb, mysql, h2",
                "outbox4j.publisher.kafka.bootstrap-servers|localhost|must list host:port pairs",
                "outbox4j.publisher.rabbitmq.uri|http://nope|uri must be an amqp:// or amqps:// URI",
            })
    @DisplayName(
            "a bad property stops the start with Boot's report naming the property and the reason")
    void badPropertyFailsTheStart(String property, String value, String reason) {
        ApplicationContextRunner r =
                property.startsWith("outbox4j.publisher")
                        ? runner
                        : runner.withBean(Publisher.class, RecordingPublisher::new);
        r.withPropertyValues(property + "=" + value)
                .run(context -> StarterContexts.assertRefused(context, property, reason));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "outbox4j.publisher.kafka.bootstrap-servers|127.0.0.1:9|KafkaPublisher[own producer]",
                "outbox4j.publisher.sqs.endpoint|http://127.0.0.1:9|SqsPublisher[sync client",
                "outbox4j.publisher.rabbitmq.uri|amqp://guest:guest@127.0.0.1:9|RabbitMqPublisher",
            })
    @DisplayName(
            "one transport's settings give that transport's publisher (no connection is opened before the first publish)")
    void publisherFromProperties(String property, String value, String publisher) {
        runner.withPropertyValues(property + "=" + value, "outbox4j.relay.poll-interval=1h")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context.getBean(Publisher.class).toString())
                                    .contains(publisher);
                        });
    }

    @Test
    @DisplayName("settings for two transports are refused until outbox4j.publisher.type picks one")
    void twoTransportsNeedAType() {
        runner.withPropertyValues(
                        "outbox4j.publisher.kafka.bootstrap-servers=localhost:9092",
                        "outbox4j.publisher.rabbitmq.uri=amqp://localhost")
                .run(
                        context ->
                                StarterContexts.assertRefused(
                                        context, "outbox4j.publisher.type", "[kafka, rabbitmq]"));
    }

    @Test
    @DisplayName(
            "a relay without any publisher stops the start with a report that lists the ways out")
    void relayWithoutPublisherFailsClearly() {
        runner.run(
                context -> {
                    assertThat(context).hasFailed();
                    StarterContexts.cause(context.getStartupFailure(), NoPublisherException.class);
                    FailureAnalysis analysis =
                            new OutboxFailureAnalyzer().analyze(context.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getAction())
                            .contains("outbox4j.publisher.kafka.bootstrap-servers")
                            .contains("outbox4j.relay.enabled=false");
                });
    }

    @Test
    @DisplayName("relay settings left unset keep the engine's defaults; set ones reach the relay")
    void unsetRelaySettingsKeepTheEngineDefaults() {
        RelayProperties unset = new OutboxProperties().getRelay();
        Relay defaults =
                OutboxRelayAutoConfiguration.relayBuilder(
                                new InMemoryOutboxStore(), new RecordingPublisher(), unset, null)
                        .build();
        assertThat(defaults.lease()).isEqualTo(Relay.DEFAULT_LEASE);
        defaults.close();
        RelayProperties set = new OutboxProperties().getRelay();
        set.setLease(Duration.ofSeconds(20));
        Relay configured =
                OutboxRelayAutoConfiguration.relayBuilder(
                                new InMemoryOutboxStore(), new RecordingPublisher(), set, null)
                        .build();
        assertThat(configured.lease()).isEqualTo(Duration.ofSeconds(20));
        configured.close();
        assertThat(new OutboxProperties().getStore().getJdbc().getTableName())
                .isEqualTo(JdbiOutboxStore.DEFAULT_TABLE_NAME);
        assertThat(new OutboxProperties().getHealth().getMaxPublishStall())
                .isEqualTo(Relay.DEFAULT_MAX_PUBLISH_STALL);
    }

    @Test
    @DisplayName(
            "health is UP with the store's counts; the endpoint lists a dead letter and replays it")
    void healthAndEndpoint() {
        RecordingPublisher publisher = new RecordingPublisher();
        publisher.refuse(m -> m.id().equals("poison"));
        runner.withBean(Publisher.class, () -> publisher)
                .withPropertyValues("management.endpoints.web.exposure.include=health,outbox")
                .run(
                        context -> {
                            TransactionalOutbox outbox = context.getBean(TransactionalOutbox.class);
                            context.getBean(TransactionTemplate.class)
                                    .executeWithoutResult(
                                            tx -> outbox.enqueueAll(List.of(message("poison"))));
                            OutboxEndpoint endpoint = context.getBean(OutboxEndpoint.class);
                            await().atMost(Duration.ofSeconds(10))
                                    .until(() -> deadCount(endpoint) == 1);

                            Map<String, Object> page =
                                    endpoint.deadLetters("dead-letters", null, null, null)
                                            .getBody();
                            @SuppressWarnings("unchecked")
                            List<Map<String, Object>> items =
                                    (List<Map<String, Object>>) page.get("items");
                            assertThat(items).hasSize(1);
                            assertThat(items.get(0))
                                    .containsEntry("id", "poison")
                                    .containsEntry("topic", "orders")
                                    .containsEntry("attempts", 1)
                                    .doesNotContainKey("payload");
                            assertThat((String) items.get(0).get("reason"))
                                    .contains("refused by the test");
                            @SuppressWarnings("unchecked")
                            List<Map<String, Object>> members =
                                    (List<Map<String, Object>>)
                                            endpoint.statistics().get("members");
                            assertThat(members)
                                    .as("the starter's relay is the outbox's only member")
                                    .singleElement()
                                    .satisfies(
                                            m ->
                                                    assertThat(m)
                                                            .containsEntry("live", true)
                                                            .containsEntry("buckets", 256));

                            Health health =
                                    context.getBean("outboxHealthIndicator", HealthIndicator.class)
                                            .health();
                            assertThat(health.getStatus()).isEqualTo(Status.UP);
                            assertThat(health.getDetails())
                                    .containsEntry("relay", "running")
                                    .containsEntry("store", "reachable")
                                    .containsKeys("ready", "leased", "dead", "oldestReadyAge");

                            WebEndpointResponse<Map<String, Object>> unknown =
                                    endpoint.act("replay", "no-such-id", null, null);
                            assertThat(unknown.getStatus())
                                    .as("replaying an unknown id: 404, as the CLI exits 3")
                                    .isEqualTo(404);
                            assertThat(unknown.getBody())
                                    .containsEntry("replayed", 0)
                                    .containsEntry(
                                            "error",
                                            "1 of the 1 ids named no dead letter (unknown, or not"
                                                    + " dead: waiting, in flight, published, or"
                                                    + " already replayed or discarded)");
                            WebEndpointResponse<Map<String, Object>> neither =
                                    endpoint.act("replay", null, null, null);
                            assertThat(neither.getStatus()).isEqualTo(400);
                            assertThat(neither.getBody().get("error").toString())
                                    .contains("give either ids")
                                    .contains("but got ids=none and all=null");
                            WebEndpointResponse<Map<String, Object>> badLimit =
                                    endpoint.deadLetters("dead-letters", null, 0, null);
                            assertThat(badLimit.getStatus()).isEqualTo(400);
                            assertThat(badLimit.getBody().get("error").toString())
                                    .as("the reason names the parameter and the value given")
                                    .contains("limit")
                                    .contains("0");
                            assertThat(endpoint.act("resend", "poison", null, null).getStatus())
                                    .isEqualTo(404);

                            publisher.refuse(m -> false);
                            assertThat(endpoint.act("replay", "poison", null, null).getBody())
                                    .containsEntry("replayed", 1);
                            await().atMost(Duration.ofSeconds(10))
                                    .until(() -> publisher.publishedIds().contains("poison"));
                            assertThat(deadCount(endpoint)).isZero();

                            context.getBean(RelayLifecycle.class).stop();
                            assertThat(
                                            context.getBean(
                                                            "outboxHealthIndicator",
                                                            HealthIndicator.class)
                                                    .health()
                                                    .getStatus())
                                    .isEqualTo(Status.DOWN);
                        });
    }

    @SuppressWarnings("unchecked")
    private static long deadCount(OutboxEndpoint endpoint) {
        Map<String, Object> total = (Map<String, Object>) endpoint.statistics().get("total");
        return ((Number) total.get("dead")).longValue();
    }
}
