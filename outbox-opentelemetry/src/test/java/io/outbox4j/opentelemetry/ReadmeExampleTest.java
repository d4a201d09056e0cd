package io.outbox4j.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox4j.api.Message;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * The README's example, run: enqueue through a Jdbi store on H2 inside an application span, relay
 * with the tracing publisher. The tagged regions are the README's snippets ({@link
 * ReadmeSnippetsTest}).
 */
class ReadmeExampleTest {
    @Test
    void readmeExample_publishSpanContinuesTheTraceStoredInTheDatabase() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk sdk =
                OpenTelemetrySdk.builder()
                        .setTracerProvider(
                                SdkTracerProvider.builder()
                                        .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                                        .build())
                        .build()) {
            OpenTelemetry openTelemetry = sdk;
            Jdbi jdbi = Jdbi.create("jdbc:h2:mem:opentelemetry-readme;DB_CLOSE_DELAY=-1");
            JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
            store.createSchemaIfAbsent();
            Map<String, Message> sent = new ConcurrentHashMap<>();
            Publisher publisher = Publisher.perMessage(m -> sent.put(m.id(), m));

            Span span = openTelemetry.getTracer("shop").spanBuilder("place order").startSpan();
            try (Scope ignored = span.makeCurrent()) {
                Message event =
                        Message.builder()
                                .id("order-1")
                                .topic("orders")
                                .module("shop")
                                .payload("{}")
                                .build();
                // tag::tracing-enqueue[]
                Outbox<Handle> outbox = OutboxTracing.outbox(store); // adds traceparent, tracestate
                jdbi.useTransaction(
                        handle -> {
                            // ...the business change, inside the application's current span
                            outbox.enqueue(handle, event);
                        });
                // end::tracing-enqueue[]
                // tag::tracing-inject[]
                Message another =
                        OutboxTracing.inject(Message.builder()) // the current span's context
                                .id("order-2")
                                .topic("orders")
                                .module("shop")
                                .payload("{}")
                                .build();
                // end::tracing-inject[]
                jdbi.useTransaction(handle -> store.enqueue(handle, another));
            } finally {
                span.end();
            }

            // tag::tracing-relay[]
            Publisher traced =
                    OutboxTracing.publisher(openTelemetry, "kafka", publisher); // messaging.system
            Relay relay = Relay.builder(store, traced).build();
            // end::tracing-relay[]
            try (relay) {
                assertThat(relay.runOnce().completed()).isEqualTo(2);
            }

            List<SpanData> spans = exporter.getFinishedSpanItems();
            SpanData enqueue =
                    spans.stream().filter(s -> s.getName().equals("place order")).findFirst().get();
            assertThat(spans.stream().filter(s -> s.getName().equals("send orders")))
                    .hasSize(2)
                    .allSatisfy(
                            s -> {
                                assertThat(s.getParentSpanId()).isEqualTo(enqueue.getSpanId());
                                String id = s.getAttributes().get(TracingPublisher.MESSAGE_ID);
                                assertThat(sent.get(id).headers())
                                        .containsEntry(
                                                OutboxTracing.TRACEPARENT,
                                                OutboxTracingTest.traceparent(s));
                            });
        }
    }
}
