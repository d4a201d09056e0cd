package io.outbox4j.engine;

import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** Small helpers shared by the engine tests. */
final class Fixtures {
    private Fixtures() {
    }

    static Message message(String id) {
        return message(id, null);
    }

    static Message message(String id, String key) {
        Message.Builder b = Message.builder().id(id).topic("orders.created").module("orders").payload("payload-" + id);
        if (key != null) {
            b.key(key);
        }
        return b.build();
    }

    static List<Message> messages(String prefix, int n) {
        List<Message> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(message(prefix + i));
        }
        return list;
    }

    static List<String> ids(List<Message> messages) {
        return messages.stream().map(Message::id).toList();
    }

    /** A publisher that decides each message's outcome with a function and records every call. */
    static final class ScriptedPublisher implements Publisher {
        final List<List<String>> calls = new CopyOnWriteArrayList<>();
        private final Function<Message, PublishOutcome> outcome;

        ScriptedPublisher(Function<Message, PublishOutcome> outcome) {
            this.outcome = outcome;
        }

        static ScriptedPublisher accepting() {
            return new ScriptedPublisher(m -> PublishOutcome.published());
        }

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            calls.add(ids(messages));
            return messages.stream().map(outcome).toList();
        }

        List<String> publishedIdsInOrder() {
            return calls.stream().flatMap(List::stream).toList();
        }
    }

    /** Collects observations and store errors. */
    static final class RecordingObserver implements Observer {
        final List<Observation> deliveries = new CopyOnWriteArrayList<>();
        final List<Throwable> storeErrors = new CopyOnWriteArrayList<>();

        @Override
        public void onDelivery(Observation observation) {
            deliveries.add(observation);
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.add(error);
        }

        List<Observation.Outcome> outcomes() {
            return deliveries.stream().map(Observation::outcome).toList();
        }
    }
}
