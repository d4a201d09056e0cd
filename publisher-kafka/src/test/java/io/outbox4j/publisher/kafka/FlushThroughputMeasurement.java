package io.outbox4j.publisher.kafka;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.testservices.KafkaServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;

/**
 * A measurement, not a test (its name keeps it out of the default surefire run): batches of 100
 * through a durable producer, awaiting the futures with and without a flush first, and through the
 * publisher. Run it with {@code ./mvnw -pl publisher-kafka test -Dtest=FlushThroughputMeasurement
 * -Dsurefire.failIfNoSpecifiedTests=false} and read the printed figures.
 */
class FlushThroughputMeasurement {
    private static final int BATCH = 100;
    private static final int MESSAGES = 50_000;
    private static final KafkaServer KAFKA = KafkaServer.shared();

    @Test
    void measure() throws Exception {
        byte[] payload = "x".repeat(100).getBytes(StandardCharsets.UTF_8);
        Map<String, Object> config =
                ProducerSettings.resolve(KAFKA.bootstrapServers(), Map.of(), false);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            String warm = KafkaTopics.create(KAFKA, "warm", 1, Map.of());
            rawRun(producer, warm, payload, true, MESSAGES);
            for (int round = 0; round < 2; round++) {
                String t1 = KafkaTopics.create(KAFKA, "flush", 1, Map.of());
                String t2 = KafkaTopics.create(KAFKA, "noflush", 1, Map.of());
                System.out.printf(
                        "raw producer, batches of %d, flush then await: %,.0f msg/s%n",
                        BATCH, rawRun(producer, t1, payload, true, MESSAGES));
                System.out.printf(
                        "raw producer, batches of %d, await only:       %,.0f msg/s%n",
                        BATCH, rawRun(producer, t2, payload, false, MESSAGES / 10));
            }
        }
        try (KafkaPublisher publisher =
                KafkaPublisher.builder().bootstrapServers(KAFKA.bootstrapServers()).build()) {
            String topic = KafkaTopics.create(KAFKA, "publisher", 4, Map.of());
            List<List<Message>> batches = batches(topic, payload);
            publishAll(publisher, batches.subList(0, batches.size() / 5), 1);
            for (int threads : new int[] {1, 4}) {
                double rate = publishAll(publisher, batches, threads);
                System.out.printf(
                        "KafkaPublisher.publish, batches of %d, %d thread(s): %,.0f msg/s%n",
                        BATCH, threads, rate);
            }
        }
    }

    private static double rawRun(
            KafkaProducer<byte[], byte[]> producer,
            String topic,
            byte[] payload,
            boolean flush,
            int messages)
            throws Exception {
        long t0 = System.nanoTime();
        for (int b = 0; b < messages / BATCH; b++) {
            List<Future<RecordMetadata>> futures = new ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                futures.add(
                        producer.send(
                                new ProducerRecord<>(
                                        topic,
                                        ("k" + (i % 20)).getBytes(StandardCharsets.UTF_8),
                                        payload)));
            }
            if (flush) {
                producer.flush();
            }
            for (Future<RecordMetadata> f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
        return messages / ((System.nanoTime() - t0) / 1e9);
    }

    private static List<List<Message>> batches(String topic, byte[] payload) {
        List<List<Message>> out = new ArrayList<>();
        for (int b = 0; b < MESSAGES / BATCH; b++) {
            int batch = b;
            out.add(
                    IntStream.range(0, BATCH)
                            .mapToObj(
                                    i ->
                                            Message.builder()
                                                    .id("m-" + batch + "-" + i)
                                                    .topic(topic)
                                                    .module("bench")
                                                    .key("k" + (i % 20))
                                                    .payload(payload)
                                                    .build())
                            .toList());
        }
        return out;
    }

    private static double publishAll(
            KafkaPublisher publisher, List<List<Message>> batches, int threads) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long t0 = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(
                        pool.submit(
                                () -> {
                                    for (int b = thread; b < batches.size(); b += threads) {
                                        for (PublishOutcome o :
                                                publisher.publish(
                                                        batches.get(b), Duration.ofSeconds(30))) {
                                            if (!o.isPublished()) {
                                                throw new AssertionError(o.toString());
                                            }
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            long n = (long) batches.stream().mapToInt(List::size).sum();
            return n / ((System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }
}
