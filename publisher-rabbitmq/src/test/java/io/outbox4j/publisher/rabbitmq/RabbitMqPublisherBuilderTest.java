package io.outbox4j.publisher.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.ConnectionFactory;
import io.outbox4j.api.Message;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryAfterException;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.testservices.ServerSupport;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Configuration mistakes fail at the boundary with a message naming the setting; no broker needed.
 */
class RabbitMqPublisherBuilderTest {
    private static final Message MESSAGE =
            Message.builder().id("m-1").topic("orders").module("orders").build();

    @Test
    void build_withoutConnectionFactoryOrUri_isRejected() {
        assertThatThrownBy(() -> RabbitMqPublisher.builder().build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("connectionFactory or uri must be set, but neither was");
    }

    @Test
    void connectionFactoryAndUriTogether_areRejected_inEitherOrder() {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("rabbit-a");
        assertThatThrownBy(
                        () ->
                                RabbitMqPublisher.builder()
                                        .connectionFactory(f)
                                        .uri("amqp://rabbit-b")
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("set either connectionFactory(...) or uri(...), not both");
        assertThatThrownBy(
                        () ->
                                RabbitMqPublisher.builder()
                                        .uri("amqp://rabbit-b")
                                        .connectionFactory(f)
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("set either connectionFactory(...) or uri(...), not both");
    }

    @Test
    void uri_thatIsNotAnAmqpUri_isRejected_withoutEchoingThePassword() {
        assertThatThrownBy(() -> RabbitMqPublisher.builder().uri("http://user:s3cret@host:5672"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "uri must be an amqp:// or amqps:// URI, but was 'http://***@host:5672'")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
        assertThatThrownBy(() -> RabbitMqPublisher.builder().uri(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("uri must not be null");
    }

    @Test
    void settings_outsideTheirRange_areRejectedWithTheValue() {
        RabbitMqPublisher.Builder b = RabbitMqPublisher.builder();
        assertThatThrownBy(() -> b.connectionFactory(null))
                .hasMessage("connectionFactory must not be null");
        assertThatThrownBy(() -> b.exchange("x".repeat(256)))
                .hasMessageStartingWith(
                        "exchange must be at most 255 bytes in UTF-8, but was 256 bytes");
        assertThatThrownBy(() -> b.exchange(null)).hasMessage("exchange must not be null");
        assertThatThrownBy(() -> b.destinationMapper(null))
                .hasMessage("destinationMapper must not be null");
        assertThatThrownBy(() -> b.publishTimeout(Duration.ZERO))
                .hasMessage("publishTimeout must be positive, but was PT0S");
        assertThatThrownBy(() -> b.maxBodyBytes(0))
                .hasMessage("maxBodyBytes must be >= 1, but was 0");
        assertThatThrownBy(() -> b.appId("ä".repeat(128)))
                .hasMessageStartingWith(
                        "appId must be at most 255 bytes in UTF-8, but was 256 bytes");
        assertThatThrownBy(() -> b.connectionName(" "))
                .hasMessage("connectionName must not be blank, but was ' '");
    }

    @Test
    void exchangeAndDestinationMapperTogether_areRejected_becauseTheMapperChoosesTheExchange() {
        RabbitMqPublisher.Builder b =
                RabbitMqPublisher.builder()
                        .uri("amqp://localhost")
                        .exchange("orders")
                        .destinationMapper(m -> new RabbitMqPublisher.Destination("", m.topic()));
        assertThatThrownBy(b::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("either exchange('orders') or destinationMapper");
    }

    @Test
    void destination_validatesItsNames() {
        assertThatThrownBy(() -> new RabbitMqPublisher.Destination(null, "k"))
                .hasMessage("exchange must not be null");
        assertThatThrownBy(() -> new RabbitMqPublisher.Destination("", "k".repeat(256)))
                .hasMessageStartingWith(
                        "routingKey must be at most 255 bytes in UTF-8, but was 256 bytes");
        assertThat(new RabbitMqPublisher.Destination("", "orders").routingKey())
                .isEqualTo("orders");
    }

    @Test
    void publish_rejectsNullsAndNonPositiveTimeouts_andReturnsNothingForAnEmptyBatch() {
        try (RabbitMqPublisher p = RabbitMqPublisher.builder().uri("amqp://127.0.0.1:1").build()) {
            assertThatThrownBy(() -> p.publish(null, Duration.ofSeconds(1)))
                    .hasMessage("messages must not be null");
            assertThatThrownBy(() -> p.publish(List.of(MESSAGE), Duration.ZERO))
                    .hasMessage("timeout must be positive, but was PT0S");
            assertThatThrownBy(() -> p.publish(Arrays.asList(MESSAGE, null), Duration.ofSeconds(1)))
                    .hasMessage("messages[1] must not be null");
            assertThat(p.publish(List.of(), Duration.ofSeconds(1))).isEmpty();
        }
    }

    @Test
    void destinationMapperThrowing_failsThatMessagePermanently_unlessItAsksForARetry() {
        try (RabbitMqPublisher p =
                RabbitMqPublisher.builder()
                        .uri("amqp://127.0.0.1:1")
                        .destinationMapper(
                                m -> {
                                    if (m.id().equals("later")) {
                                        throw new RetryAfterException(
                                                "routing table loading",
                                                Duration.ofSeconds(7),
                                                null);
                                    }
                                    throw new IllegalStateException("no route for " + m.id());
                                })
                        .build()) {
            List<PublishOutcome> outcomes =
                    p.publish(
                            List.of(MESSAGE, MESSAGE.toBuilder().id("later").build()),
                            Duration.ofSeconds(5));

            assertThat(outcomes.get(0).isPermanent())
                    .as("the mapper would throw again: " + outcomes.get(0))
                    .isTrue();
            assertThat(outcomes.get(0).failure().orElseThrow())
                    .isInstanceOf(PermanentFailureException.class)
                    .hasMessageContaining("destinationMapper threw for message 'm-1'")
                    .hasRootCauseMessage("no route for m-1");
            assertThat(outcomes.get(1).isPermanent()).isFalse();
            assertThat(outcomes.get(1).retryAfter()).contains(Duration.ofSeconds(7));
        }
    }

    @Test
    void build_doesNotConnect_andAnUnreachableBrokerFailsEachMessageRetryablyWithinTheTimeout() {
        int closedPort = ServerSupport.freePort();
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        f.setPort(closedPort);
        try (RabbitMqPublisher p = RabbitMqPublisher.builder().connectionFactory(f).build()) {
            long t0 = System.nanoTime();
            List<PublishOutcome> outcomes =
                    p.publish(
                            List.of(MESSAGE, MESSAGE.toBuilder().id("m-2").build()),
                            Duration.ofSeconds(5));
            Duration took = Duration.ofNanos(System.nanoTime() - t0);

            assertThat(outcomes)
                    .hasSize(2)
                    .allSatisfy(
                            o -> {
                                assertThat(o.isPublished()).isFalse();
                                assertThat(o.isPermanent()).isFalse();
                                assertThat(o.failure().orElseThrow())
                                        .isInstanceOf(RetryableFailureException.class)
                                        .hasMessageContaining(
                                                "could not publish to RabbitMQ at 127.0.0.1:"
                                                        + closedPort
                                                        + " while opening a channel")
                                        .hasMessageContaining("Connection refused")
                                        .hasMessageNotContaining("will be retried")
                                        .cause()
                                        .as("the client library's own error is kept as the cause")
                                        .isNotNull();
                            });
            assertThat(took).isLessThan(Duration.ofSeconds(6));
        }
    }
}
