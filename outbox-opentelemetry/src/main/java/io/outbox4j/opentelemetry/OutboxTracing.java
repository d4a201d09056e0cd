package io.outbox4j.opentelemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.outbox4j.api.Message;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.Publisher;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Carries the trace of the transaction that enqueued a message to the broker, with the
 * OpenTelemetry API.
 *
 * <p><b>At enqueue</b>, the W3C trace context of the current span ({@value #TRACEPARENT}, and
 * {@value #TRACESTATE} when it has one) is stored with the message as user headers, in the same
 * transaction: either per message with {@link #inject(Message.Builder)}, or for every message with
 * the decorating {@link #outbox(Outbox)}.
 *
 * <p><b>At publish</b>, the decorating {@link #publisher(OpenTelemetry, String, Publisher)} starts
 * one {@link io.opentelemetry.api.trace.SpanKind#PRODUCER PRODUCER} span per message whose parent
 * is the stored context (a message stored without one starts a new trace), writes the span's own
 * context into the outgoing headers, and ends the span with the message's outcome. The publishers
 * pass user headers on: as Kafka record headers and AMQP headers (where consumers' OpenTelemetry
 * instrumentation finds {@value #TRACEPARENT}), and on SQS inside the {@code outbox-headers}
 * attribute (a JSON object; an SQS consumer reads {@value #TRACEPARENT} from there).
 *
 * <pre>{@code
 * // enqueue, inside the application's span and transaction
 * Outbox<Handle> outbox = OutboxTracing.outbox(store);
 * jdbi.useTransaction(h -> { orders.insert(h, order); outbox.enqueue(h, event); });
 *
 * // relay
 * Publisher traced = OutboxTracing.publisher(openTelemetry, "kafka", kafkaPublisher);
 * Relay relay = Relay.builder(store, traced).build();
 * }</pre>
 *
 * Nothing changes for an application that does not use this class. With the OpenTelemetry Java
 * agent's Kafka instrumentation active, the agent writes the context of its own send span into each
 * record, replacing the one written here; disable that instrumentation for the relay ({@code
 * otel.instrumentation.kafka.enabled=false}) to keep the trace of the enqueue.
 */
public final class OutboxTracing {
    /** The W3C trace context header: version, trace id, parent span id and flags. */
    public static final String TRACEPARENT = "traceparent";

    /** The W3C trace state header: vendor-specific trace data, present only when there is some. */
    public static final String TRACESTATE = "tracestate";

    /** The instrumentation scope name of the spans this module starts. */
    public static final String INSTRUMENTATION_NAME = "io.outbox4j.opentelemetry";

    static final TextMapPropagator PROPAGATOR = W3CTraceContextPropagator.getInstance();

    static final TextMapSetter<Map<String, String>> SETTER =
            (carrier, key, value) -> {
                if (carrier != null) {
                    carrier.put(key, value);
                }
            };

    private OutboxTracing() {}

    /**
     * Stores the trace context of the current span in a message being built ({@value #TRACEPARENT},
     * {@value #TRACESTATE}). Without a valid current span it sets nothing.
     *
     * @param builder the message builder
     * @return the same builder
     * @throws IllegalArgumentException if {@code builder} is null
     */
    public static Message.Builder inject(Message.Builder builder) {
        return inject(builder, Context.current());
    }

    /**
     * Stores the trace context of a given context's span in a message being built.
     *
     * @param builder the message builder
     * @param context the context whose span is to become the parent of the publish span
     * @return the same builder
     * @throws IllegalArgumentException if an argument is null
     */
    public static Message.Builder inject(Message.Builder builder, Context context) {
        if (builder == null) {
            throw new IllegalArgumentException("builder must not be null");
        }
        if (context == null) {
            throw new IllegalArgumentException("context must not be null");
        }
        Map<String, String> headers = contextHeaders(context);
        headers.forEach(builder::header);
        return builder;
    }

    /**
     * Wraps an outbox so that every message it enqueues carries the trace context of the span that
     * is current at the call, unless the message already has a {@value #TRACEPARENT} header.
     * Without a valid current span the messages are enqueued as they are.
     *
     * @param delegate the store's outbox
     * @param <T> the store's transaction handle type
     * @return the tracing outbox
     * @throws IllegalArgumentException if {@code delegate} is null
     */
    public static <T> Outbox<T> outbox(Outbox<T> delegate) {
        if (delegate == null) {
            throw new IllegalArgumentException("delegate must not be null");
        }
        return new TracingOutbox<>(delegate);
    }

    /**
     * Wraps a publisher so that each message is published inside a producer span that continues the
     * trace stored with it.
     *
     * @param openTelemetry where the spans go
     * @param messagingSystem the {@code messaging.system} attribute of the spans: {@code kafka},
     *     {@code rabbitmq}, {@code aws_sqs}…
     * @param delegate the publisher that sends the messages
     * @return the tracing publisher; closing it closes {@code delegate}
     * @throws IllegalArgumentException if an argument is null or the system blank
     */
    public static Publisher publisher(
            OpenTelemetry openTelemetry, String messagingSystem, Publisher delegate) {
        if (openTelemetry == null) {
            throw new IllegalArgumentException("openTelemetry must not be null");
        }
        if (messagingSystem == null || messagingSystem.isBlank()) {
            throw new IllegalArgumentException(
                    "messagingSystem must not be blank, but was '" + messagingSystem + "'");
        }
        if (delegate == null) {
            throw new IllegalArgumentException("delegate must not be null");
        }
        return new TracingPublisher(
                openTelemetry.getTracer(INSTRUMENTATION_NAME), messagingSystem, delegate);
    }

    /** The W3C headers of a context's span; empty when it has no valid span. */
    static Map<String, String> contextHeaders(Context context) {
        Map<String, String> headers = new LinkedHashMap<>();
        PROPAGATOR.inject(context, headers, SETTER);
        return headers;
    }

    /** The context stored in a message's headers, on top of {@code base}. */
    static Context extract(Context base, Map<String, String> headers) {
        return PROPAGATOR.extract(base, headers, Getter.INSTANCE);
    }

    /** Reads W3C headers from a message's header map. */
    enum Getter implements io.opentelemetry.context.propagation.TextMapGetter<Map<String, String>> {
        INSTANCE;

        @Override
        @SuppressWarnings(
                "deprecation") // abstract in older API versions, which an application may still
        // bring
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public @Nullable String get(@Nullable Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    }
}
