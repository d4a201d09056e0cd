package io.outbox4j.publisher.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.testservices.KafkaServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Test helpers: fresh topics and a consumer that reads a topic back from the beginning. */
final class KafkaTopics {
    private static KafkaServer stoppable;

    private KafkaTopics() {}

    /**
     * A private embedded broker that tests may stop and start, shared by the test classes of this
     * JVM (they run one after the other) so that its start-up is paid once; running when returned.
     */
    static synchronized KafkaServer stoppableBroker() {
        if (stoppable == null) {
            stoppable = KafkaServer.startEmbedded(); // stopped when the JVM exits
        }
        stoppable.start();
        return stoppable;
    }

    /** Creates a topic with a name unique to this run. */
    static String create(
            KafkaServer kafka, String prefix, int partitions, Map<String, String> configs) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        kafka.createTopic(name, partitions, configs);
        return name;
    }

    /**
     * Reads every partition of {@code topic} from the start until {@code expected} records came or
     * time ran out.
     */
    static List<ConsumerRecord<byte[], byte[]>> readAll(
            KafkaServer kafka, String topic, int expected, Duration timeout) {
        Map<String, Object> props = kafka.clientProperties();
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            consumer.partitionsFor(topic, Duration.ofSeconds(10))
                    .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(100)).forEach(out::add);
            }
            // a short extra poll so that a test expecting N also sees an unexpected N+1st record
            consumer.poll(Duration.ofMillis(200)).forEach(out::add);
        }
        return out;
    }

    /** The headers of a record as strings, in order. */
    static Map<String, String> headers(ConsumerRecord<byte[], byte[]> r) {
        Map<String, String> h = new LinkedHashMap<>();
        for (Header header : r.headers()) {
            h.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
        }
        return h;
    }

    static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    static String utf8(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    /**
     * The records by key (their UTF-8 text), asserting that each key's records sit on one
     * partition, as Kafka's per-key order needs.
     */
    static Map<String, List<ConsumerRecord<byte[], byte[]>>> byKeyOnOnePartition(
            List<ConsumerRecord<byte[], byte[]>> read) {
        Map<String, List<ConsumerRecord<byte[], byte[]>>> byKey =
                read.stream().collect(Collectors.groupingBy(r -> utf8(r.key())));
        byKey.forEach(
                (key, records) ->
                        assertThat(records.stream().map(ConsumerRecord::partition).distinct())
                                .as("partitions of " + key)
                                .hasSize(1));
        return byKey;
    }
}
