package io.outbox4j.micrometer;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** See {@link OutboxObservations#publisher}. */
final class ObservedPublisher implements Publisher {
    private final ObservationRegistry registry;
    private final Publisher delegate;

    ObservedPublisher(ObservationRegistry registry, Publisher delegate) {
        this.registry = registry;
        this.delegate = delegate;
    }

    /** The context of one send: the carrier is the message's headers, written by the handlers. */
    static final class SendContext extends SenderContext<Map<String, String>> {
        final Map<String, String> headers;

        SendContext(Message message) {
            super(
                    (carrier, key, value) -> {
                        if (carrier != null) {
                            carrier.put(key, value);
                        }
                    });
            this.headers = new LinkedHashMap<>(message.headers());
            setCarrier(headers);
        }
    }

    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        if (registry.isNoop()) {
            return delegate.publish(messages, timeout);
        }
        List<Observation> observations = new ArrayList<>(messages.size());
        List<Message> outgoing = new ArrayList<>(messages.size());
        for (Message m : messages) {
            SendContext context = new SendContext(m);
            Observation o =
                    Observation.createNotStarted(OutboxObservations.NAME, () -> context, registry)
                            .contextualName("send " + m.topic())
                            .lowCardinalityKeyValue(
                                    KeyValue.of("messaging.destination.name", m.topic()))
                            .lowCardinalityKeyValue(KeyValue.of("messaging.operation.type", "send"))
                            .highCardinalityKeyValue(KeyValue.of("messaging.message.id", m.id()))
                            .start();
            observations.add(o);
            outgoing.add(withHeaders(m, context.headers));
        }
        List<PublishOutcome> outcomes;
        try {
            outcomes = delegate.publish(outgoing, timeout);
        } catch (RuntimeException | Error e) {
            for (Observation o : observations) {
                o.lowCardinalityKeyValue("outcome", "failed").error(e).stop();
            }
            throw e;
        }
        for (int i = 0; i < observations.size(); i++) {
            Observation o = observations.get(i);
            PublishOutcome outcome = i < outcomes.size() ? outcomes.get(i) : null;
            if (outcome != null && outcome.isPublished()) {
                o.lowCardinalityKeyValue("outcome", "published");
            } else {
                o.lowCardinalityKeyValue("outcome", "failed");
                if (outcome != null) {
                    outcome.failure().ifPresent(o::error);
                }
            }
            o.stop();
        }
        return outcomes;
    }

    /**
     * The message with the headers the handlers wrote, or itself when they wrote none. It was valid
     * when it was enqueued, so the copy is not checked against the default limits again.
     */
    private static Message withHeaders(Message m, Map<String, String> headers) {
        if (headers.equals(m.headers())) {
            return m;
        }
        try {
            return m.toBuilder().headers(headers).limits(MessageLimits.UNLIMITED).build();
        } catch (IllegalArgumentException e) {
            // A handler wrote a header a message cannot carry: send the message as it was.
            return m;
        }
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "ObservedPublisher[" + delegate + "]";
    }
}
