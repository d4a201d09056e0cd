package io.outbox4j.publisher.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryAfterException;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.testservices.KafkaServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The publisher against the shared real broker: what lands in Kafka and what each outcome says. */
class KafkaPublisherTest {
    private static final KafkaServer KAFKA = KafkaServer.shared();
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static KafkaPublisher publisher;

    @BeforeAll
    static void start() {
        publisher = KafkaPublisher.builder().bootstrapServers(KAFKA.bootstrapServers()).build();
    }

    @AfterAll
    static void stop() {
        publisher.close();
    }

    private static Message.Builder message(String id, String topic) {
        return Message.builder().id(id).topic(topic).module("orders").payload("payload of " + id);
    }

    @Test
    void publish_roundTripsKeyPayloadAndHeaders() {
        String topic = KafkaTopics.create(KAFKA, "roundtrip", 1, Map.of());
        Instant occurredAt = Instant.parse("2024-05-01T12:00:00.123456Z");
        Message m =
                message("m-1", topic)
                        .key("customer-7")
                        .contentType("application/json; charset=UTF-8")
                        .payload("{\"total\":42}")
                        .occurredAt(occurredAt)
                        .header("traceparent", "00-abc-def-01")
                        .header("tenant", "acme")
                        .build();

        List<PublishOutcome> outcomes = publisher.publish(List.of(m), TIMEOUT);

        assertThat(outcomes)
                .singleElement()
                .satisfies(o -> assertThat(o.isPublished()).as(o.toString()).isTrue());
        List<ConsumerRecord<byte[], byte[]>> read = KafkaTopics.readAll(KAFKA, topic, 1, TIMEOUT);
        assertThat(read).hasSize(1);
        ConsumerRecord<byte[], byte[]> r = read.get(0);
        assertThat(KafkaTopics.utf8(r.key())).isEqualTo("customer-7");
        assertThat(KafkaTopics.utf8(r.value())).isEqualTo("{\"total\":42}");
        assertThat(KafkaTopics.headers(r))
                .containsExactly(
                        Map.entry("outbox-id", "m-1"),
                        Map.entry("outbox-topic", topic),
                        Map.entry("outbox-module", "orders"),
                        Map.entry("outbox-content-type", "application/json; charset=utf-8"),
                        Map.entry("outbox-occurred-at", "2024-05-01T12:00:00.123456Z"),
                        Map.entry("outbox-key", "customer-7"),
                        Map.entry("traceparent", "00-abc-def-01"),
                        Map.entry("tenant", "acme"));
        assertThat(Instant.parse(KafkaTopics.header(r, OutboxHeaders.OCCURRED_AT)))
                .isEqualTo(occurredAt);
        assertThat(r.timestamp())
                .as("record timestamp is the send time, not occurredAt")
                .isGreaterThan(occurredAt.toEpochMilli());
    }

    @Test
    void publish_withoutKey_usesTheIdAsKey() {
        String topic = KafkaTopics.create(KAFKA, "idkey", 1, Map.of());

        assertThat(
                        publisher
                                .publish(List.of(message("id-as-key", topic).build()), TIMEOUT)
                                .get(0)
                                .isPublished())
                .isTrue();

        assertThat(KafkaTopics.readAll(KAFKA, topic, 1, TIMEOUT))
                .extracting(r -> KafkaTopics.utf8(r.key()))
                .containsExactly("id-as-key");
    }

    @Test
    void publish_sameKey_landsOnOnePartitionInBatchOrder() {
        String topic = KafkaTopics.create(KAFKA, "order", 6, Map.of());
        List<Message> batch =
                IntStream.range(0, 300)
                        .mapToObj(i -> message("o-" + i, topic).key("k" + (i % 10)).build())
                        .toList();

        List<PublishOutcome> outcomes = publisher.publish(batch, TIMEOUT);

        assertThat(outcomes).allMatch(PublishOutcome::isPublished);
        List<ConsumerRecord<byte[], byte[]>> read = KafkaTopics.readAll(KAFKA, topic, 300, TIMEOUT);
        assertThat(read).hasSize(300);
        Map<String, List<ConsumerRecord<byte[], byte[]>>> byKey =
                KafkaTopics.byKeyOnOnePartition(read);
        assertThat(byKey).hasSize(10);
        assertThat(read.stream().map(ConsumerRecord::partition).distinct().count())
                .as("10 keys spread over more than one of 6 partitions")
                .isGreaterThan(1);
        byKey.forEach(
                (key, records) -> {
                    List<Integer> seq =
                            records.stream()
                                    .map(
                                            r ->
                                                    Integer.parseInt(
                                                            KafkaTopics.header(r, OutboxHeaders.ID)
                                                                    .substring(2)))
                                    .toList();
                    assertThat(seq).as("order of " + key).isSorted();
                });
    }

    @Test
    void publish_recordTooLargeForTopic_failsPermanently_whileTheRestOfTheBatchIsPublished() {
        // The topic limit stays above the producer's batch.size (16 KiB): below it, Kafka's
        // producer re-splits a
        // rejected batch forever (KAFKA-8350) and the whole batch times out instead (see the
        // README).
        String topic = KafkaTopics.create(KAFKA, "small", 1, Map.of("max.message.bytes", "32768"));
        List<Message> batch =
                List.of(
                        message("before", topic).build(),
                        message("huge", topic).payload(new byte[64 * 1024]).build(),
                        message("after", topic).build());

        List<PublishOutcome> outcomes = publisher.publish(batch, TIMEOUT);

        assertThat(outcomes.get(0).isPublished()).as(outcomes.get(0).toString()).isTrue();
        assertThat(outcomes.get(2).isPublished()).as(outcomes.get(2).toString()).isTrue();
        PublishOutcome huge = outcomes.get(1);
        assertThat(huge.isPublished()).isFalse();
        assertThat(huge.isPermanent()).as(huge.toString()).isTrue();
        assertThat(huge.failure().orElseThrow())
                .isInstanceOf(PermanentFailureException.class)
                .hasMessageContaining("'huge'")
                .hasMessageContaining("record too large")
                .hasCauseInstanceOf(org.apache.kafka.common.errors.RecordTooLargeException.class);
        assertThat(KafkaTopics.readAll(KAFKA, topic, 2, TIMEOUT))
                .extracting(r -> KafkaTopics.header(r, OutboxHeaders.ID))
                .containsExactly("before", "after");
    }

    @Test
    void publish_topicMapper_routesMessages_andAnInvalidTopicFailsOnlyThatMessagePermanently() {
        String topic = KafkaTopics.create(KAFKA, "mapped", 1, Map.of());
        try (KafkaPublisher mapped =
                KafkaPublisher.builder()
                        .bootstrapServers(KAFKA.bootstrapServers())
                        .topicMapper(
                                m -> m.topic().equals("orders.created") ? topic : "no such/topic")
                        .build()) {
            List<PublishOutcome> outcomes =
                    mapped.publish(
                            List.of(
                                    message("routed", "orders.created").build(),
                                    message("unroutable", "orders.deleted").build()),
                            TIMEOUT);

            assertThat(outcomes.get(0).isPublished()).as(outcomes.get(0).toString()).isTrue();
            assertThat(outcomes.get(1).isPermanent()).as(outcomes.get(1).toString()).isTrue();
            assertThat(outcomes.get(1).failure().orElseThrow())
                    .hasMessageContaining("'unroutable'")
                    .hasMessageContaining("'no such/topic'");
        }
        List<ConsumerRecord<byte[], byte[]>> read = KafkaTopics.readAll(KAFKA, topic, 1, TIMEOUT);
        assertThat(read)
                .extracting(r -> KafkaTopics.header(r, OutboxHeaders.ID))
                .containsExactly("routed");
        assertThat(KafkaTopics.header(read.get(0), OutboxHeaders.TOPIC))
                .as("the event-contract topic travels even when the Kafka topic differs")
                .isEqualTo("orders.created");
    }

    @Test
    void publish_topicMapperThrowing_failsThatMessagePermanently_andTheRestIsPublished() {
        String topic = KafkaTopics.create(KAFKA, "mapperfail", 1, Map.of());
        try (KafkaPublisher mapped =
                KafkaPublisher.builder()
                        .bootstrapServers(KAFKA.bootstrapServers())
                        .topicMapper(
                                m -> {
                                    if (m.id().equals("boom")) {
                                        throw new IllegalStateException("no route for " + m.id());
                                    }
                                    if (m.id().equals("later")) {
                                        throw new RetryAfterException(
                                                "routing table loading",
                                                Duration.ofSeconds(7),
                                                null);
                                    }
                                    return topic;
                                })
                        .build()) {
            List<PublishOutcome> outcomes =
                    mapped.publish(
                            List.of(
                                    message("boom", "t").build(),
                                    message("later", "t").build(),
                                    message("fine", "t").build()),
                            TIMEOUT);

            PublishOutcome boom = outcomes.get(0);
            assertThat(boom.isPublished()).isFalse();
            assertThat(boom.isPermanent()).as("the mapper would throw again: " + boom).isTrue();
            assertThat(boom.failure().orElseThrow())
                    .isInstanceOf(PermanentFailureException.class)
                    .hasMessageContaining("topicMapper threw for message 'boom'")
                    .hasRootCauseMessage("no route for boom");
            PublishOutcome later = outcomes.get(1);
            assertThat(later.isPermanent()).as("a RetryAfterException keeps its meaning").isFalse();
            assertThat(later.retryAfter()).contains(Duration.ofSeconds(7));
            assertThat(outcomes.get(2).isPublished()).as(outcomes.get(2).toString()).isTrue();
        }
        assertThat(KafkaTopics.readAll(KAFKA, topic, 1, TIMEOUT))
                .extracting(r -> KafkaTopics.header(r, OutboxHeaders.ID))
                .containsExactly("fine");
    }

    @Test
    void publish_sendsOnTheCallersThread_withoutAHandOff() {
        String topic = KafkaTopics.create(KAFKA, "caller", 1, Map.of());
        try (KafkaPublisher own =
                KafkaPublisher.builder()
                        .bootstrapServers(KAFKA.bootstrapServers())
                        .producerProperty(
                                ProducerConfig.INTERCEPTOR_CLASSES_CONFIG,
                                SendCounter.class.getName())
                        .build()) {
            List<Message> batch =
                    IntStream.range(0, 20).mapToObj(i -> message("c-" + i, topic).build()).toList();

            assertThat(own.publish(batch, TIMEOUT))
                    .hasSize(20)
                    .allMatch(PublishOutcome::isPublished);
        }
        assertThat(SendCounter.senders(topic))
                .as("the threads that handed the records to the producer")
                .containsExactly(Thread.currentThread());
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void publish_fromSeveralThreadsAtOnce_publishesEveryMessageOnce() throws Exception {
        String topic = KafkaTopics.create(KAFKA, "concurrent", 4, Map.of());
        int threads = 4;
        int batches = 10;
        int perBatch = 40;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<List<PublishOutcome>>> calls = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                calls.add(
                        () -> {
                            List<PublishOutcome> all = new ArrayList<>();
                            for (int b = 0; b < batches; b++) {
                                int batch = b;
                                all.addAll(
                                        publisher.publish(
                                                IntStream.range(0, perBatch)
                                                        .mapToObj(
                                                                i ->
                                                                        message(
                                                                                        "t" + thread
                                                                                                + "-b"
                                                                                                + batch
                                                                                                + "-"
                                                                                                + i,
                                                                                        topic)
                                                                                .key("t" + thread)
                                                                                .build())
                                                        .toList(),
                                                TIMEOUT));
                            }
                            return all;
                        });
            }
            for (Future<List<PublishOutcome>> f : pool.invokeAll(calls)) {
                assertThat(f.get())
                        .hasSize(batches * perBatch)
                        .allMatch(PublishOutcome::isPublished);
            }
        } finally {
            pool.shutdownNow();
        }
        int total = threads * batches * perBatch;
        List<String> ids =
                KafkaTopics.readAll(KAFKA, topic, total, TIMEOUT).stream()
                        .map(r -> KafkaTopics.header(r, OutboxHeaders.ID))
                        .toList();
        assertThat(ids).hasSize(total).doesNotHaveDuplicates();
    }

    @Test
    void publish_afterClose_failsEveryMessageRetryably_withoutSending() {
        String topic = KafkaTopics.create(KAFKA, "closed", 1, Map.of());
        KafkaPublisher closing =
                KafkaPublisher.builder().bootstrapServers(KAFKA.bootstrapServers()).build();
        closing.close();

        List<PublishOutcome> outcomes =
                closing.publish(List.of(message("late", topic).build()), TIMEOUT);

        assertThat(outcomes)
                .singleElement()
                .satisfies(
                        o -> {
                            assertThat(o.isPublished()).isFalse();
                            assertThat(o.isPermanent()).isFalse();
                            assertThat(o.failure().orElseThrow())
                                    .isInstanceOf(RetryableFailureException.class)
                                    .hasMessageContaining("closed");
                        });
        assertThat(KafkaTopics.readAll(KAFKA, topic, 0, Duration.ZERO)).isEmpty();
    }

    @Test
    void publish_binaryPayload_arrivesByteForByte() {
        String topic = KafkaTopics.create(KAFKA, "binary", 1, Map.of());
        byte[] payload = new byte[256];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) i;
        }
        Message m = message("bin", topic).payload(payload).header("note", "ünïcødé ✓").build();

        assertThat(publisher.publish(List.of(m), TIMEOUT).get(0).isPublished()).isTrue();

        ConsumerRecord<byte[], byte[]> r = KafkaTopics.readAll(KAFKA, topic, 1, TIMEOUT).get(0);
        assertThat(r.value()).isEqualTo(payload);
        assertThat(new String(r.headers().lastHeader("note").value(), StandardCharsets.UTF_8))
                .isEqualTo("ünïcødé ✓");
    }
}
