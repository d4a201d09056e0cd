package io.outbox4j.faulttests;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The counting consumer: reads every partition of a topic from the beginning, on its own thread,
 * for as long as it runs (across broker outages), and feeds each record to a {@link
 * DeliveryLedger}: its key, its {@value KeyedLoad#SEQ_HEADER} header, the relay that published it
 * ({@value RelayTagInterceptor#HEADER} header) and its timestamp. Create the topic with {@code
 * message.timestamp.type=LogAppendTime} so the timestamp is when the broker took the record.
 */
public final class KafkaTally implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final DeliveryLedger ledger;
    private final Thread thread;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean running = true;

    private KafkaTally(String bootstrapServers, String topic, DeliveryLedger ledger) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        props.put(ConsumerConfig.RECONNECT_BACKOFF_MS_CONFIG, 50);
        props.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "fault-tally-" + topic);
        this.consumer = new KafkaConsumer<>(props);
        this.ledger = ledger;
        List<TopicPartition> partitions = new ArrayList<>();
        consumer.partitionsFor(topic, Duration.ofSeconds(30))
                .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        this.thread = new Thread(this::run, "fault-tally-" + topic);
        thread.setDaemon(true);
    }

    /**
     * Starts counting a topic that exists.
     *
     * @param bootstrapServers the broker
     * @param topic the topic
     * @param ledger where the records go
     * @return the running consumer; close it to stop
     */
    public static KafkaTally start(String bootstrapServers, String topic, DeliveryLedger ledger) {
        KafkaTally tally = new KafkaTally(bootstrapServers, topic, ledger);
        tally.thread.start();
        return tally;
    }

    private void run() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    ledger.record(
                            r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8),
                            seq(r),
                            header(r, RelayTagInterceptor.HEADER, "?"),
                            r.timestamp());
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException | Error e) {
            failure.set(e);
        } finally {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(2)));
        }
    }

    private static int seq(ConsumerRecord<byte[], byte[]> r) {
        try {
            return Integer.parseInt(header(r, KeyedLoad.SEQ_HEADER, "-1"));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name, String absent) {
        Header h = r.headers().lastHeader(name);
        return h == null ? absent : new String(h.value(), StandardCharsets.UTF_8);
    }

    /**
     * Throws what ended the consumer thread, if anything did.
     *
     * @throws IllegalStateException with the consumer's failure as the cause
     */
    public void checkHealthy() {
        Throwable t = failure.get();
        if (t != null) {
            throw new IllegalStateException("the counting consumer failed: " + t, t);
        }
    }

    /** Stops the consumer and waits for its thread. */
    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
