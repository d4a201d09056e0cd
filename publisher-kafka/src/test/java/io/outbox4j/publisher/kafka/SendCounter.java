package io.outbox4j.publisher.kafka;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A producer interceptor (Kafka's own hook, set with {@code interceptor.classes}, called on the
 * thread that calls {@code send}) that lets a test wait until the publisher has handed a number of
 * records of a topic to the producer, instead of sleeping and hoping it has, and tells which
 * threads handed them over. Public because Kafka instantiates it by reflection.
 */
public final class SendCounter implements ProducerInterceptor<byte[], byte[]> {
    private static final Map<String, CountDownLatch> EXPECTED = new ConcurrentHashMap<>();
    private static final Map<String, Set<Thread>> SENDERS = new ConcurrentHashMap<>();

    /** Kafka's constructor. */
    public SendCounter() {}

    /** Returns a latch that reaches zero once {@code records} records of the topic were sent. */
    static CountDownLatch expect(String topic, int records) {
        CountDownLatch latch = new CountDownLatch(records);
        EXPECTED.put(topic, latch);
        return latch;
    }

    /** The threads that handed records of the topic to the producer. */
    static Set<Thread> senders(String topic) {
        return SENDERS.getOrDefault(topic, Set.of());
    }

    @Override
    public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
        SENDERS.computeIfAbsent(record.topic(), t -> ConcurrentHashMap.newKeySet())
                .add(Thread.currentThread());
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
