package io.outbox4j.opentelemetry;

import io.opentelemetry.context.Context;
import io.outbox4j.api.Message;
import io.outbox4j.api.Outbox;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** See {@link OutboxTracing#outbox(Outbox)}. */
final class TracingOutbox<T> implements Outbox<T> {
    private final Outbox<T> delegate;

    TracingOutbox(Outbox<T> delegate) {
        this.delegate = delegate;
    }

    @Override
    public void enqueue(T transaction, Message message) {
        delegate.enqueue(
                transaction, traced(message, OutboxTracing.contextHeaders(Context.current())));
    }

    @Override
    public void enqueueAll(T transaction, List<Message> messages) {
        Map<String, String> trace = OutboxTracing.contextHeaders(Context.current());
        if (trace.isEmpty() || messages == null) {
            delegate.enqueueAll(transaction, messages);
            return;
        }
        List<Message> traced = new ArrayList<>(messages.size());
        for (Message m : messages) {
            traced.add(traced(m, trace));
        }
        delegate.enqueueAll(transaction, traced);
    }

    private static Message traced(Message m, Map<String, String> trace) {
        if (m == null || trace.isEmpty() || m.headers().containsKey(OutboxTracing.TRACEPARENT)) {
            return m;
        }
        Map<String, String> headers = new LinkedHashMap<>(m.headers());
        headers.putAll(trace);
        return Messages.withHeaders(m, headers);
    }

    @Override
    public String toString() {
        return "TracingOutbox[" + delegate + "]";
    }
}
