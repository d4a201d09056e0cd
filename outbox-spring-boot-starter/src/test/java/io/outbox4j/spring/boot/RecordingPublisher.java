package io.outbox4j.spring.boot;

import io.outbox4j.api.Message;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/** A publisher that keeps what it published and fails permanently the messages it is told to. */
public final class RecordingPublisher implements Publisher {
    private final List<Message> published = new CopyOnWriteArrayList<>();
    private volatile Predicate<Message> refuse = m -> false;

    /** Messages matching the predicate fail permanently (they are dead-lettered). */
    public void refuse(Predicate<Message> refuse) {
        this.refuse = refuse;
    }

    public List<Message> published() {
        return List.copyOf(published);
    }

    public List<String> publishedIds() {
        List<String> ids = new ArrayList<>();
        published.forEach(m -> ids.add(m.id()));
        return ids;
    }

    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        List<PublishOutcome> out = new ArrayList<>();
        for (Message m : messages) {
            if (refuse.test(m)) {
                out.add(
                        PublishOutcome.failed(
                                new PermanentFailureException("refused by the test")));
            } else {
                published.add(m);
                out.add(PublishOutcome.published());
            }
        }
        return out;
    }
}
