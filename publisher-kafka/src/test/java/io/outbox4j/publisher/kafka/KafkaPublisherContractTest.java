package io.outbox4j.publisher.kafka;

import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.PublisherContract;
import io.outbox4j.testservices.KafkaServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;

/** The publisher contract kit against a real Kafka broker. */
class KafkaPublisherContractTest extends PublisherContract {
    private static final KafkaServer KAFKA = KafkaServer.shared();
    private static KafkaPublisher publisher;

    @Override
    protected Publisher publisher() {
        synchronized (KafkaPublisherContractTest.class) {
            if (publisher == null) {
                publisher =
                        KafkaPublisher.builder().bootstrapServers(KAFKA.bootstrapServers()).build();
            }
            return publisher;
        }
    }

    @AfterAll
    static void closePublisher() {
        synchronized (KafkaPublisherContractTest.class) {
            if (publisher != null) {
                publisher.close();
                publisher = null;
            }
        }
    }

    @Override
    protected String newTopic() {
        return KafkaTopics.create(KAFKA, "tck", 3, Map.of());
    }

    @Override
    protected List<Received> readBack(String topic, int expected, Duration timeout) {
        return KafkaTopics.readAll(KAFKA, topic, expected, timeout).stream()
                .map(
                        r ->
                                new Received(
                                        KafkaTopics.header(r, OutboxHeaders.ID),
                                        r.value(),
                                        Optional.ofNullable(KafkaTopics.utf8(r.key())),
                                        KafkaTopics.headers(r)))
                .toList();
    }

    @Override
    protected Optional<Publisher> closablePublisher() {
        return Optional.of(
                KafkaPublisher.builder().bootstrapServers(KAFKA.bootstrapServers()).build());
    }

    /**
     * A 2 MiB payload: over the producer's max.request.size (1 MiB), which Kafka refuses as record
     * too large.
     */
    @Override
    protected Optional<Message> permanentlyRejectedMessage(String topic) {
        int size = 2 * 1024 * 1024;
        MessageLimits limits = MessageLimits.DEFAULTS.withMaxPayloadBytes(size);
        return Optional.of(
                Message.builder()
                        .limits(limits)
                        .id("too-large-" + UUID.randomUUID())
                        .topic(topic)
                        .module("tck")
                        .payload(new byte[size])
                        .build());
    }
}
