package io.outbox4j.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox4j.api.Message;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.engine.Relay;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The span tree enqueue → publish with the OpenTelemetry SDK and an in-memory exporter, through the
 * engine and the reference store.
 */
class OutboxTracingTest {
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final OpenTelemetrySdk otel =
            OpenTelemetrySdk.builder()
                    .setTracerProvider(
                            SdkTracerProvider.builder()
                                    .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                                    .build())
                    .build();
    private final Tracer tracer = otel.getTracer("shop");

    @AfterEach
    void closeSdk() {
        otel.close();
    }

    @Test
    void publishSpan_isAChildOfTheSpanThatEnqueued_andItsContextGoesToTheBroker() {
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        Outbox<InMemoryOutboxStore.Transaction> outbox = OutboxTracing.outbox(store);

        Span placeOrder = tracer.spanBuilder("place order").startSpan();
        try (Scope ignored = placeOrder.makeCurrent()) {
            InMemoryOutboxStore.Transaction tx = store.begin();
            outbox.enqueue(tx, message("o1").build());
            store.enqueue(tx, OutboxTracing.inject(message("o2-fails")).build());
            tx.commit();
        } finally {
            placeOrder.end();
        }
        InMemoryOutboxStore.Transaction untraced = store.begin();
        outbox.enqueue(untraced, message("o3-no-trace").build());
        untraced.commit();

        Map<String, Message> sent = new ConcurrentHashMap<>();
        Publisher broker =
                Publisher.perMessage(
                        m -> {
                            sent.put(m.id(), m);
                            if (m.id().equals("o2-fails")) {
                                throw new RetryableFailureException("broker busy");
                            }
                        });
        try (Relay relay =
                Relay.builder(store, OutboxTracing.publisher(otel, "test-broker", broker))
                        .build()) {
            assertThat(relay.runOnce().claimed()).isEqualTo(3);
        }

        Map<String, SpanData> spans =
                exporter.getFinishedSpanItems().stream()
                        .collect(
                                Collectors.toMap(
                                        s ->
                                                s.getName().equals("place order")
                                                        ? "place order"
                                                        : s.getAttributes()
                                                                .get(TracingPublisher.MESSAGE_ID),
                                        s -> s));
        assertThat(spans).containsOnlyKeys("place order", "o1", "o2-fails", "o3-no-trace");
        SpanData enqueue = spans.get("place order");
        for (String id : List.of("o1", "o2-fails")) {
            SpanData publish = spans.get(id);
            assertThat(publish.getName()).isEqualTo("send orders");
            assertThat(publish.getKind()).isEqualTo(SpanKind.PRODUCER);
            assertThat(publish.getTraceId()).as(id).isEqualTo(enqueue.getTraceId());
            assertThat(publish.getParentSpanId()).as(id).isEqualTo(enqueue.getSpanId());
            assertThat(publish.getAttributes().get(AttributeKey.stringKey("messaging.system")))
                    .isEqualTo("test-broker");
            assertThat(
                            publish.getAttributes()
                                    .get(AttributeKey.stringKey("messaging.destination.name")))
                    .isEqualTo("orders");
            assertThat(sent.get(id).headers())
                    .as("the broker gets the publish span's context, not the enqueue's")
                    .containsEntry(OutboxTracing.TRACEPARENT, traceparent(publish))
                    .containsEntry("seq", id);
        }
        assertThat(spans.get("o1").getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        SpanData failed = spans.get("o2-fails");
        assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(failed.getStatus().getDescription()).isEqualTo("broker busy");
        assertThat(failed.getEvents()).extracting(e -> e.getName()).containsExactly("exception");

        SpanData root = spans.get("o3-no-trace");
        assertThat(root.getParentSpanContext().isValid())
                .as("a message enqueued outside any span starts a trace of its own")
                .isFalse();
        assertThat(root.getTraceId()).isNotEqualTo(enqueue.getTraceId());
        assertThat(sent.get("o3-no-trace").headers().get(OutboxTracing.TRACEPARENT))
                .isEqualTo(traceparent(root));
    }

    @Test
    void outsideASpan_messagesAreEnqueuedUnchanged() {
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        Message plain = message("p1").build();
        InMemoryOutboxStore.Transaction tx = store.begin();
        OutboxTracing.outbox(store).enqueueAll(tx, List.of(plain));
        tx.commit();
        assertThat(OutboxTracing.inject(message("p2")).build().headers()).containsOnlyKeys("seq");
        Message stored =
                store.claim(
                                new io.outbox4j.api.ClaimRequest(
                                        "t",
                                        java.time.Instant.now(),
                                        java.time.Duration.ofSeconds(5),
                                        1))
                        .get(0)
                        .message();
        assertThat(stored).isEqualTo(plain);
    }

    @Test
    void publisher_refusesMissingArguments() {
        Publisher p = (messages, timeout) -> List.of();
        assertThatThrownBy(() -> OutboxTracing.publisher(otel, " ", p))
                .hasMessage("messagingSystem must not be blank, but was ' '");
    }

    /** The W3C traceparent of a span: version 00, trace id, span id, flags. */
    static String traceparent(SpanData span) {
        return "00-"
                + span.getTraceId()
                + "-"
                + span.getSpanId()
                + "-"
                + span.getSpanContext().getTraceFlags().asHex();
    }

    private static Message.Builder message(String id) {
        return Message.builder()
                .id(id)
                .topic("orders")
                .module("shop")
                .payload("{}")
                .header("seq", id);
    }
}
