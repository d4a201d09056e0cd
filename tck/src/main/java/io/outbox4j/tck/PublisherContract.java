package io.outbox4j.tck;

import io.outbox4j.api.Message;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The publisher contract kit. A publisher implementer extends this class in their test sources, supplies a
 * publisher against a real broker and a way to read back what reached the broker.
 *
 * <p>SKELETON: the rules are being written; the factory methods below are the stable surface.
 */
public abstract class PublisherContract {

    /**
     * Returns the publisher under test; may return the same instance every time.
     *
     * @return the publisher
     */
    protected abstract Publisher publisher();

    /**
     * Creates a fresh, empty destination that exists at the broker and returns the topic that the
     * publisher maps to it.
     *
     * @return a topic name unique to the calling test
     */
    protected abstract String newTopic();

    /**
     * Reads back what reached the broker for a topic, waiting until {@code expected} messages arrived or
     * the timeout passed.
     *
     * @param topic the topic from {@link #newTopic()}
     * @param expected how many messages to wait for
     * @param timeout how long to wait at most
     * @return the messages read, in the order the broker delivered them
     */
    protected abstract List<Received> readBack(String topic, int expected, Duration timeout);

    /**
     * Returns a message the broker (or the publisher) must reject permanently, such as one over the size
     * limit, for the given topic; empty (with {@link #permanentFailureUnsupported()}) when the transport has none.
     *
     * @param topic the topic from {@link #newTopic()}
     * @return the message, or empty
     */
    protected abstract Optional<Message> permanentlyRejectedMessage(String topic);

    /**
     * Explains why {@link #permanentlyRejectedMessage(String)} is empty; the rule is skipped with it.
     *
     * @return the reason
     */
    protected String permanentFailureUnsupported() {
        return "the implementer supplied no permanently rejected message";
    }

    /**
     * A message as read back from the broker.
     *
     * @param id the message id the broker carried (a header, property or attribute)
     * @param payload the body bytes
     * @param key the key the broker carried, if the transport has one
     */
    public record Received(String id, byte[] payload, Optional<String> key) {
    }
}
