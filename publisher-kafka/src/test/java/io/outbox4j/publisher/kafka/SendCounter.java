package io.outbox4j.publisher.kafka;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A producer interceptor (Kafka's own hook, set with {@code interceptor.classes}) that lets a test
 * wait until the publisher has handed a number of records of a topic to the producer, instead of
 * sleeping and hoping it has. Public because Kafka instantiates it by reflection.
 */
public final class SendCounter implements ProducerInterceptor<byte[], byte[]> {
    private static final Map<String, CountDownLatch> EXPECTED = new ConcurrentHashMap<>();

    /** Kafka's constructor. */
    public SendCounter() {}

    /** Returns a latch that reaches zero once {@code records} records of the topic were sent. */
    static CountDownLatch expect(String topic, int records) {
        CountDownLatch latch = new CountDownLatch(records);
        EXPECTED.put(topic, latch);
        return latch;
    }

    @Override
    public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
        CountDownLatch latch = EXPECTED.get(record.topic());
        if (latch != null) {
            latch.countDown();
        }
        return record;
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

    @Override
    public void close() {}

    @Override
    public void configure(Map<String, ?> configs) {}
}
