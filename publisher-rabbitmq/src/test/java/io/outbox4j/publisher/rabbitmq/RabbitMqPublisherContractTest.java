package io.outbox4j.publisher.rabbitmq;

import com.rabbitmq.client.GetResponse;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.PublisherContract;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;

/**
 * The publisher contract kit against a real RabbitMQ: each topic is a durable queue reached through
 * the default exchange (the publisher's default mapping).
 */
class RabbitMqPublisherContractTest extends PublisherContract {
    private static RabbitMqPublisher publisher;

    private static synchronized RabbitMqPublisher shared() {
        if (publisher == null) {
            publisher = Rabbit.publisherBuilder().connectionName("outbox4j-tck").build();
        }
        return publisher;
    }

    @AfterAll
    static void closePublisher() {
        if (publisher != null) {
            publisher.close();
            publisher = null;
        }
    }

    @Override
    protected Publisher publisher() {
        return shared();
    }

    @Override
    protected String newTopic() {
        return Rabbit.declareQueue("tck");
    }

    @Override
    protected List<Received> readBack(String topic, int expected, Duration timeout) {
        return Rabbit.take(topic, expected, timeout).stream()
                .map(RabbitMqPublisherContractTest::received)
                .toList();
    }

    private static Received received(GetResponse r) {
        Map<String, Object> headers = r.getProps().getHeaders();
        Object key = headers == null ? null : headers.get(OutboxHeaders.KEY);
        Map<String, String> text = new LinkedHashMap<>();
        if (headers != null) {
            headers.forEach((name, value) -> text.put(name, String.valueOf(value)));
        }
        return new Received(
                r.getProps().getMessageId(),
                r.getBody(),
                Optional.ofNullable(key).map(Object::toString),
                text);
    }

    @Override
    protected Optional<Publisher> closablePublisher() {
        return Optional.of(Rabbit.publisherBuilder().connectionName("outbox4j-tck-close").build());
    }

    /**
     * AMQP short strings hold 255 bytes: an id of 200 two-byte characters is valid for the outbox,
     * never for AMQP.
     */
    @Override
    protected Optional<Message> permanentlyRejectedMessage(String topic) {
        String id = "é".repeat(200) + UUID.randomUUID().toString().substring(0, 8);
        return Optional.of(
                Message.builder()
                        .id(id)
                        .topic(topic)
                        .module("tck")
                        .payload("too long an id")
                        .build());
    }
}
