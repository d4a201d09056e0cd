package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.testservices.KafkaServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads back what the starter's relays published to the shared Kafka server. */
final class KafkaReads {
    private KafkaReads() {}

    /** How often each outbox message id was read, and how many records were read in all. */
    record Tally(Map<String, Integer> ids, int records) {}

    /** A consumer of the topic's one partition from its beginning, committing nothing. */
    static KafkaConsumer<byte[], byte[]> consumer(String topic) {
        Map<String, Object> props = KafkaServer.shared().clientProperties();
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props);
        TopicPartition p = new TopicPartition(topic, 0);
        c.assign(List.of(p));
        c.seekToBeginning(List.of(p));
        return c;
    }

    /** The outbox message id a record carries in its header. */
    static String id(ConsumerRecord<byte[], byte[]> r) {
        return new String(r.headers().lastHeader(OutboxHeaders.ID).value(), StandardCharsets.UTF_8);
    }

    /**
     * Reads until {@code count} records arrived (30 s at most), then polls once more to catch
     * extras; the caller asserts on the count.
     */
    static Tally readUntilCount(KafkaConsumer<byte[], byte[]> c, int count) {
        Map<String, Integer> ids = new HashMap<>();
        int records = 0;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (records < count && System.nanoTime() < deadline) {
            records += read(c, Duration.ofMillis(200), ids);
        }
        records += read(c, Duration.ofMillis(500), ids);
        return new Tally(ids, records);
    }

    /** One poll: counts each record's id into {@code ids}; returns how many records it read. */
    private static int read(
            KafkaConsumer<byte[], byte[]> c, Duration timeout, Map<String, Integer> ids) {
        int records = 0;
        for (ConsumerRecord<byte[], byte[]> r : c.poll(timeout)) {
            records++;
            ids.merge(id(r), 1, Integer::sum);
        }
        return records;
    }
}
