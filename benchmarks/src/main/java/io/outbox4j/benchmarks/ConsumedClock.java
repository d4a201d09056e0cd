package io.outbox4j.benchmarks;

import io.outbox4j.api.OutboxHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Notes when each record of a one-partition topic reaches a consumer in this JVM ({@code
 * System.nanoTime()} per {@code outbox-id} header): the ack clock of a publisher in another
 * process. Stricter than the broker's ack: it adds the consumer's fetch (which returns as soon as a
 * record is there).
 */
final class ConsumedClock implements AutoCloseable {
    /** Message id → {@code System.nanoTime()} when the record was consumed. */
    final Map<String, Long> consumedAt = new ConcurrentHashMap<>();

    private final BackgroundLoop loop;

    ConsumedClock(Env env, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, env.kafka().bootstrapServers());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1");
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        TopicPartition partition = new TopicPartition(topic, 0);
        consumer.assign(List.of(partition));
        consumer.seekToEnd(List.of(partition));
        consumer.position(partition); // resolves the end now: only records from here on count
        this.loop =
                new BackgroundLoop(
                        "bench-consumer-" + topic,
                        "the consumer of " + topic,
                        stopped -> {
                            try (consumer) {
                                while (!stopped.getAsBoolean()) {
                                    for (ConsumerRecord<byte[], byte[]> r :
                                            consumer.poll(Duration.ofMillis(100))) {
                                        long now = System.nanoTime();
                                        Header id = r.headers().lastHeader(OutboxHeaders.ID);
                                        if (id != null) {
                                            consumedAt.put(
                                                    new String(id.value(), StandardCharsets.UTF_8),
                                                    now);
                                        }
                                    }
                                }
                            }
                        });
    }

    @Override
    public void close() {
        loop.close();
    }
}
