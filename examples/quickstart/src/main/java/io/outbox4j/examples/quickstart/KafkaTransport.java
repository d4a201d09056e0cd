package io.outbox4j.examples.quickstart;

import io.outbox4j.api.Publisher;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.testservices.KafkaServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Kafka: an embedded single-node KRaft broker by default, or an existing cluster. */
final class KafkaTransport implements Transport {
    private static final int PARTITIONS = 8;

    private final KafkaServer embedded;
    private final String bootstrap;
    private final KafkaPublisher publisher;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private Thread consumerThread;

    private KafkaTransport(KafkaServer embedded, String bootstrap) {
        this.embedded = embedded;
        this.bootstrap = bootstrap;
        // tag::kafka-publisher[]
        this.publisher = KafkaPublisher.builder().bootstrapServers(bootstrap).build();
        // end::kafka-publisher[]
    }

    static KafkaTransport embedded() {
        KafkaServer server = KafkaServer.startEmbedded();
        return new KafkaTransport(server, server.bootstrapServers());
    }

    static KafkaTransport external(String bootstrap) {
        return new KafkaTransport(null, bootstrap);
    }

    @Override
    public void prepare(String topic, Duration timeout) {
        int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
        try (Admin admin =
                Admin.create(
                        Map.of(
                                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                                bootstrap,
                                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
                                ms,
                                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG,
                                ms))) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1)))
                    .all()
                    .get(ms, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException(
                        "could not create Kafka topic '"
                                + topic
                                + "' at "
                                + bootstrap
                                + ": "
                                + (e.getCause()
                                                instanceof
                                                org.apache.kafka.common.errors.TimeoutException
                                        ? "no broker answered within " + timeout.toSeconds() + "s"
                                        : e.getCause().getMessage())
                                + " (--publisher, --timeout)",
                        e);
            }
        } catch (TimeoutException e) {
            throw new IllegalStateException(
                    "could not create Kafka topic '"
                            + topic
                            + "' at "
                            + bootstrap
                            + ": no broker answered within "
                            + timeout.toSeconds()
                            + "s (--publisher, --timeout)",
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topic " + topic, e);
        }
    }

    @Override
    public Publisher publisher() {
        return publisher;
    }

    @Override
    public void startConsumer(String topic, Tally tally) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "quickstart-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(topic));
        consumerThread =
                new Thread(
                        () -> {
                            try (consumer) {
                                while (running.get()) {
                                    for (ConsumerRecord<byte[], byte[]> r :
                                            consumer.poll(Duration.ofMillis(100))) {
                                        tally.record(
                                                header(r, "outbox-id"),
                                                new String(r.key(), StandardCharsets.UTF_8),
                                                Long.parseLong(header(r, SEQ_HEADER)));
                                    }
                                }
                            }
                        },
                        "quickstart-kafka-consumer");
        consumerThread.setDaemon(true);
        consumerThread.start();
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        if (h == null) {
            throw new IllegalStateException(
                    "record at "
                            + r.topic()
                            + "-"
                            + r.partition()
                            + "@"
                            + r.offset()
                            + " has no "
                            + name
                            + " header");
        }
        return new String(h.value(), StandardCharsets.UTF_8);
    }

    @Override
    public String describe() {
        return embedded != null
                ? "Kafka (embedded, " + bootstrap + ")"
                : "Kafka (" + bootstrap + ")";
    }

    @Override
    public void close() {
        Transport.stopConsumer(running, consumerThread);
        publisher.close();
        if (embedded != null) {
            embedded.close();
        }
    }
}
