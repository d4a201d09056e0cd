package io.outbox4j.examples.springboot;

import io.outbox4j.api.OutboxHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * A downstream consumer, for the demo: reads the order topic and logs each event with the time from
 * its {@code placedAt} to its arrival. It keeps the ids it received (by the {@code outbox-id}
 * header), which is what a real consumer would deduplicate on.
 */
@Component
class OrderEventsLog implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger("orders.events");

    private final String bootstrap;
    private final String topic;
    private final Map<String, Instant> received = new ConcurrentHashMap<>();
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile Thread thread;

    OrderEventsLog(
            @Value("${outbox4j.publisher.kafka.bootstrap-servers}") String bootstrap,
            @Value("${example.topic}") String topic) {
        this.bootstrap = bootstrap;
        this.topic = topic;
    }

    /** The order ids received so far. */
    Map<String, Instant> received() {
        return Map.copyOf(received);
    }

    @Override
    public void start() {
        createTopic();
        KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(
                        Map.of(
                                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                                bootstrap,
                                ConsumerConfig.GROUP_ID_CONFIG,
                                "order-events-log",
                                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                                "earliest",
                                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
                                ByteArrayDeserializer.class,
                                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                                ByteArrayDeserializer.class));
        c.subscribe(List.of(topic));
        consumer = c;
        Thread t = new Thread(() -> poll(c), "order-events-log");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    private void poll(KafkaConsumer<byte[], byte[]> c) {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    Header id = r.headers().lastHeader(OutboxHeaders.ID);
                    String orderId =
                            id == null ? "?" : new String(id.value(), StandardCharsets.UTF_8);
                    Instant now = Instant.now();
                    if (received.putIfAbsent(orderId, now) != null) {
                        LOG.info("duplicate {} ignored (at-least-once delivery)", orderId);
                        continue;
                    }
                    LOG.info(
                            "received {} from partition {} offset {}: {}",
                            orderId,
                            r.partition(),
                            r.offset(),
                            new String(r.value(), StandardCharsets.UTF_8));
                }
            }
        } catch (WakeupException e) {
            // stopping
        } finally {
            c.close();
        }
    }

    private void createTopic() {
        try (Admin admin =
                Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1))).all().get();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException(
                        "cannot create topic " + topic + ": " + e.getCause(), e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void stop() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        Thread t = thread;
        if (c != null && t != null) {
            c.wakeup();
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        consumer = null;
        thread = null;
    }

    @Override
    public boolean isRunning() {
        return thread != null;
    }
}
