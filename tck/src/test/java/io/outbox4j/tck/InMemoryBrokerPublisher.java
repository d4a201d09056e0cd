package io.outbox4j.tck;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A fake "broker" for the publisher kit's self-test: a map of topics to the messages they received.
 * It rejects payloads over {@link #MAX_PAYLOAD} bytes permanently, as a broker rejects a record too
 * large, carries the standard headers and the user headers, and refuses to publish once closed.
 * Every instance delivers to the same broker (topics are unique per rule). Subclasses bend one rule
 * each.
 */
class InMemoryBrokerPublisher implements Publisher {
    static final int MAX_PAYLOAD = 1000;

    static final Map<String, List<PublisherContract.Received>> topics = new ConcurrentHashMap<>();

    volatile boolean closed;

    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        List<PublishOutcome> out = new ArrayList<>();
        for (Message m : messages) {
            if (closed) {
                out.add(PublishOutcome.failed(new RetryableFailureException("closed")));
            } else if (m.payloadSize() > MAX_PAYLOAD) {
                out.add(
                        PublishOutcome.failed(
                                new PermanentFailureException(
                                        "payload is "
                                                + m.payloadSize()
                                                + " bytes, over the broker's "
                                                + MAX_PAYLOAD
                                                + " limit")));
            } else {
                deliver(m);
                out.add(PublishOutcome.published());
            }
        }
        return out;
    }

    void deliver(Message m) {
        List<PublisherContract.Received> queue =
                topics.computeIfAbsent(m.topic(), t -> new ArrayList<>());
        synchronized (queue) {
            queue.add(new PublisherContract.Received(m.id(), m.payload(), m.key(), headers(m)));
        }
    }

    /** What the broker carries as headers: the standard set, then the user headers. */
    Map<String, String> headers(Message m) {
        Map<String, String> headers = new LinkedHashMap<>(OutboxHeaders.of(m));
        headers.putAll(m.headers());
        return headers;
    }

    @Override
    public void close() {
        closed = true;
    }

    List<PublisherContract.Received> read(String topic) {
        List<PublisherContract.Received> queue = topics.getOrDefault(topic, List.of());
        synchronized (queue) {
            return new ArrayList<>(queue);
        }
    }
}
