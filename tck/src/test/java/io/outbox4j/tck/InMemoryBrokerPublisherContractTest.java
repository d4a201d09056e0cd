package io.outbox4j.tck;

import io.outbox4j.api.Message;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** The publisher kit against the in-memory fake broker: every rule must pass. */
class InMemoryBrokerPublisherContractTest extends PublisherContract {
    final InMemoryBrokerPublisher publisher = newPublisher();

    InMemoryBrokerPublisher newPublisher() {
        return new InMemoryBrokerPublisher();
    }

    @Override
    protected Publisher publisher() {
        return publisher;
    }

    @Override
    protected String newTopic() {
        return "tck.topic." + UUID.randomUUID();
    }

    @Override
    protected List<Received> readBack(String topic, int expected, Duration timeout) {
        return publisher.read(topic);
    }

    @Override
    protected Optional<Publisher> closablePublisher() {
        return Optional.of(newPublisher());
    }

    @Override
    protected Optional<Message> permanentlyRejectedMessage(String topic) {
        return Optional.of(
                Message.builder()
                        .id("too-large-" + UUID.randomUUID())
                        .topic(topic)
                        .module("tck")
                        .payload(new byte[InMemoryBrokerPublisher.MAX_PAYLOAD + 1])
                        .build());
    }
}
