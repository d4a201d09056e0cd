package io.outbox4j.opentelemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** See {@link OutboxTracing#publisher}. */
final class TracingPublisher implements Publisher {
    static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> DESTINATION =
            AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<String> OPERATION_TYPE =
            AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> OPERATION_NAME =
            AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<String> MODULE = AttributeKey.stringKey("outbox4j.module");

    private final Tracer tracer;
    private final String messagingSystem;
    private final Publisher delegate;

    TracingPublisher(Tracer tracer, String messagingSystem, Publisher delegate) {
        this.tracer = tracer;
        this.messagingSystem = messagingSystem;
        this.delegate = delegate;
    }

    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        List<Span> spans = new ArrayList<>(messages.size());
        List<Message> outgoing = new ArrayList<>(messages.size());
        Context base = Context.current();
        for (Message m : messages) {
            Context parent = OutboxTracing.extract(base, m.headers());
            Span span =
                    tracer.spanBuilder("send " + m.topic())
                            .setParent(parent)
                            .setSpanKind(SpanKind.PRODUCER)
                            .setAttribute(MESSAGING_SYSTEM, messagingSystem)
                            .setAttribute(DESTINATION, m.topic())
                            .setAttribute(OPERATION_TYPE, "send")
                            .setAttribute(OPERATION_NAME, "send")
                            .setAttribute(MESSAGE_ID, m.id())
                            .setAttribute(MODULE, m.module())
                            .startSpan();
            spans.add(span);
            outgoing.add(withContext(m, parent.with(span)));
        }
        List<PublishOutcome> outcomes;
        try {
            outcomes = delegate.publish(outgoing, timeout);
        } catch (RuntimeException | Error e) {
            for (Span span : spans) {
                span.recordException(e);
                span.setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
                span.end();
            }
            throw e;
        }
        for (int i = 0; i < spans.size(); i++) {
            Span span = spans.get(i);
            PublishOutcome outcome = i < outcomes.size() ? outcomes.get(i) : null;
            if (outcome == null) {
                span.setStatus(StatusCode.ERROR, "the publisher gave no outcome");
            } else if (!outcome.isPublished()) {
                Throwable failure = outcome.failure().orElse(null);
                if (failure != null) {
                    span.recordException(failure);
                }
                span.setStatus(
                        StatusCode.ERROR,
                        failure == null ? "not published" : String.valueOf(failure.getMessage()));
            }
            span.end();
        }
        return outcomes;
    }

    /** The message with the publish span's context in place of the stored one. */
    private static Message withContext(Message m, Context context) {
        Map<String, String> headers = new LinkedHashMap<>(m.headers());
        headers.remove(OutboxTracing.TRACEPARENT);
        headers.remove(OutboxTracing.TRACESTATE);
        headers.putAll(OutboxTracing.contextHeaders(context));
        try {
            return Messages.withHeaders(m, headers);
        } catch (IllegalArgumentException e) {
            return m; // a trace state a message cannot carry: send the message as it was
        }
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "TracingPublisher[" + messagingSystem + ", " + delegate + "]";
    }
}
