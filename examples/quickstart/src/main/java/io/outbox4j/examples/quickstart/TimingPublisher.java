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

    /** Warm-up events published (left out of the figures). */
    final AtomicLong warmUpPublished = new AtomicLong();

    TimingPublisher(Publisher delegate) {
        this.delegate = delegate;
    }

    /** Events acknowledged per second, from the first acknowledgement to the last. */
    double rate() {
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (long t : ackNanos.values()) {
            first = Math.min(first, t);
            last = Math.max(last, t);
        }
        long n = ackNanos.size();
        return n < 2 || last <= first ? n : (n - 1) / ((last - first) / 1e9);
    }

    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        List<PublishOutcome> outcomes = delegate.publish(messages, timeout);
        long now = System.nanoTime();
        for (int i = 0; i < outcomes.size(); i++) {
            if (outcomes.get(i).isPublished()
                    && messages.get(i).id().startsWith(Quickstart.WARM_UP)) {
                warmUpPublished.incrementAndGet();
            } else if (outcomes.get(i).isPublished()) {
                ackNanos.putIfAbsent(messages.get(i).id(), now);
                published.incrementAndGet();
            }
        }
        return outcomes;
    }
}
