package io.outbox4j.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox4j.api.Message;
import io.outbox4j.engine.Relay;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.tck.InMemoryOutboxStore;
import io.outbox4j.testservices.KafkaServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.StreamSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * Consumer side, with a real Kafka broker and the Kafka publisher: the record carries the trace of
 * the transaction that enqueued the message, through the relay's publish span.
 */
class KafkaTracePropagationTest {
    /** Reads a header of a Kafka record, as a consumer's instrumentation does. */
    private static final TextMapGetter<ConsumerRecord<byte[], byte[]>> RECORD_HEADERS =
            new TextMapGetter<>() {
                @Override
                @SuppressWarnings(
                        "deprecation") // still abstract in the API: a getter must implement it
                public Iterable<String> keys(ConsumerRecord<byte[], byte[]> record) {
                    return StreamSupport.stream(record.headers().spliterator(), false)
                            .map(Header::key)
                            .toList();
                }

                @Override
                public String get(ConsumerRecord<byte[], byte[]> record, String key) {
                    Header h = record == null ? null : record.headers().lastHeader(key);
                    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
                }
            };

    @Test
    void kafkaRecord_carriesTheTraceOfTheEnqueue_withThePublishSpanAsParent() {
        KafkaServer kafka = KafkaServer.shared();
        String topic = "traced-" + UUID.randomUUID().toString().substring(0, 8);
        kafka.createTopic(topic, 1, Map.of());

        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk otel =
                        OpenTelemetrySdk.builder()
                                .setTracerProvider(
                                        SdkTracerProvider.builder()
                                                .addSpanProcessor(
                                                        SimpleSpanProcessor.create(exporter))
                                                .build())
                                .build();
                KafkaPublisher kafkaPublisher =
                        KafkaPublisher.builder()
                                .bootstrapServers(kafka.bootstrapServers())
                                .build()) {
            InMemoryOutboxStore store = new InMemoryOutboxStore();
            Span placeOrder = otel.getTracer("shop").spanBuilder("place order").startSpan();
            try (Scope ignored = placeOrder.makeCurrent()) {
                InMemoryOutboxStore.Transaction tx = store.begin();
                OutboxTracing.outbox(store)
                        .enqueue(
                                tx,
                                Message.builder()
                                        .id("order-1")
                                        .topic(topic)
                                        .key("customer-7")
                                        .module("shop")
                                        .payload("{\"order\":1}")
                                        .build());
                tx.commit();
            } finally {
                placeOrder.end();
            }
            try (Relay relay =
                    Relay.builder(store, OutboxTracing.publisher(otel, "kafka", kafkaPublisher))
                            .build()) {
                assertThat(relay.runOnce().completed()).isEqualTo(1);
            }

            ConsumerRecord<byte[], byte[]> record = readOne(kafka, topic);
            // what a consumer's instrumentation does: extract the context from the record headers
            SpanContext remote =
                    Span.fromContext(
                                    W3CTraceContextPropagator.getInstance()
                                            .extract(Context.root(), record, RECORD_HEADERS))
                            .getSpanContext();

            SpanData enqueue = span(exporter, "place order");
            SpanData publish = span(exporter, "send " + topic);
            assertThat(remote.isValid()).as("a valid traceparent on the record").isTrue();
            assertThat(remote.isRemote()).isTrue();
            assertThat(remote.getTraceId())
                    .as("the record continues the trace of the enqueue")
                    .isEqualTo(enqueue.getTraceId());
            assertThat(remote.getSpanId())
                    .as("the consumer's parent is the relay's publish span")
                    .isEqualTo(publish.getSpanId());
            assertThat(publish.getParentSpanId()).isEqualTo(enqueue.getSpanId());
            assertThat(new String(record.key(), StandardCharsets.UTF_8)).isEqualTo("customer-7");
        }
    }

    private static SpanData span(InMemorySpanExporter exporter, String name) {
        List<SpanData> spans =
                exporter.getFinishedSpanItems().stream()
                        .filter(s -> s.getName().equals(name))
                        .toList();
        assertThat(spans).as("finished spans named '%s'", name).hasSize(1);
        return spans.get(0);
    }

    private static ConsumerRecord<byte[], byte[]> readOne(KafkaServer kafka, String topic) {
        Map<String, Object> props = kafka.clientProperties();
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (out.isEmpty() && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        assertThat(out).as("records read back from %s", topic).hasSize(1);
        return out.get(0);
    }
}
