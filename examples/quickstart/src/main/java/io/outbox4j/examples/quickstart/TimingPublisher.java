package io.outbox4j.examples.quickstart;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps the real publisher to note when the broker acknowledged each event, for the latency
 * figures.
 */
final class TimingPublisher implements Publisher {
    private final Publisher delegate;
    final Map<String, Long> ackNanos = new ConcurrentHashMap<>();
    final AtomicLong published = new AtomicLong();

    TimingPublisher(Publisher delegate) {
        this.delegate = delegate;
    }

    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        List<PublishOutcome> outcomes = delegate.publish(messages, timeout);
        long now = System.nanoTime();
        for (int i = 0; i < outcomes.size(); i++) {
            if (outcomes.get(i).isPublished()) {
                ackNanos.putIfAbsent(messages.get(i).id(), now);
                published.incrementAndGet();
            }
        }
        return outcomes;
    }
}
