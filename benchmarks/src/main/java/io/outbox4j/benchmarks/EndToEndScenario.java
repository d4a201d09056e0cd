package io.outbox4j.benchmarks;

import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End to end: PostgreSQL → relay → Kafka ({@link KafkaPublisher}) vs a hand-written loop doing the
 * same work on a table of the same shape with a producer of the same durability settings (acks=all,
 * idempotence): claim a batch, send every record (same key and the same
 * id/topic/module/content-type/occurred-at headers), flush, await every acknowledgement, delete the
 * batch.
 */
final class EndToEndScenario {
    static final String SUBJECT = "e2e_outbox";
    static final String HAND = "e2e_hand";
    static final String KAFKA_TOPIC = "bench-e2e";

    private EndToEndScenario() {}

    static Result run(Env env) {
        Options o = env.options;
        int n = o.size("e2e-messages");
        int batch = o.size("batch");
        int payload = o.size("payload");
        int rounds = o.size("rounds");
        Result r =
                new Result(
                                "e2e",
                                "End to end: PostgreSQL -> relay -> Kafka vs hand-written claim/send/flush/await/delete")
                        .config("messages", n)
                        .config("hand_batch", batch)
                        .config("payload_bytes", payload)
                        .config("rounds", rounds)
                        .config("relay", Drains.relaySettings())
                        .config("kafka_topic_partitions", 1)
                        .config(
                                "producer",
                                "acks=all, enable.idempotence=true, other settings Kafka defaults (both sides)");
        JdbiOutboxStore store = env.store(SUBJECT);
        env.handTable(HAND, SUBJECT);
        env.kafka().createTopic(KAFKA_TOPIC, 1, Map.of());
        Drains.Comparison c;
        try (KafkaPublisher publisher =
                        KafkaPublisher.builder()
                                .bootstrapServers(env.kafka().bootstrapServers())
                                .topicMapper(m -> KAFKA_TOPIC)
                                .build();
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(producerProperties(env))) {
            Drains.Send send = kafkaSend(producer, KAFKA_TOPIC);
            int warm = Math.min(o.size("warmup-messages") / 4, n);
            c =
                    Drains.sideBySide(
                            env, "e2e", store, SUBJECT, HAND, publisher, send, n, warm, batch,
                            payload, rounds);
        }
        List<Double> relayRates = c.relayRates;
        List<Double> handRates = c.handRates;
        Drains.Breakdown relaySide = c.relaySide;
        Drains.Breakdown handSide = c.handSide;
        double relay = Stats.median(relayRates);
        double hand = Stats.median(handRates);
        r.figure("relay_msgs_per_s", "outbox4j relay + KafkaPublisher (median)", relay, "msg/s")
                .figure(
                        "hand_msgs_per_s",
                        "hand-written loop + KafkaProducer (median)",
                        hand,
                        "msg/s");
        relaySide.report(r, "relay", "relay", "complete()");
        handSide.report(r, "hand", "hand-written", "delete");
        r.check(
                "relay / hand-written (median of rounds)",
                Stats.medianRatio(relayRates, handRates),
                ">=",
                1.0);
        r.config("relay_rates", DrainScenario.rounded(relayRates))
                .config("hand_rates", DrainScenario.rounded(handRates));
        r.headline(Result.fmt(relay) + " msg/s", Result.fmt(hand) + " msg/s (hand-written loop)");
        env.execute("DROP TABLE " + Env.q(SUBJECT) + ", " + Env.q(HAND));
        return r;
    }

    /**
     * The hand-written side's producer settings: the publisher's durability (acks=all,
     * idempotence), Kafka's defaults otherwise.
     *
     * @param env the environment
     * @return producer properties
     */
    static Map<String, Object> producerProperties(Env env) {
        Map<String, Object> props = env.kafka().clientProperties();
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return props;
    }

    /**
     * What a hand-written relay does with a claimed batch: send every record (same key and the same
     * five outbox headers as the publisher), flush, await every acknowledgement.
     *
     * @param producer the producer
     * @param topic the Kafka topic
     * @return the send step
     */
    static Drains.Send kafkaSend(KafkaProducer<byte[], byte[]> producer, String topic) {
        return rows -> {
            List<Future<RecordMetadata>> acks = new ArrayList<>(rows.size());
            for (HandWritten.Row row : rows) {
                RecordHeaders headers = new RecordHeaders();
                headers.add(OutboxHeaders.ID, utf8(row.id()));
                headers.add(OutboxHeaders.TOPIC, utf8(row.topic()));
                headers.add(OutboxHeaders.MODULE, utf8(row.module()));
                headers.add(OutboxHeaders.CONTENT_TYPE, utf8(row.contentType()));
                headers.add(
                        OutboxHeaders.OCCURRED_AT, utf8(row.occurredAt().toInstant().toString()));
                byte[] key = utf8(row.key() != null ? row.key() : row.id());
                acks.add(
                        producer.send(
                                new ProducerRecord<>(topic, null, key, row.payload(), headers)));
            }
            producer.flush();
            for (Future<RecordMetadata> ack : acks) {
                ack.get(30, TimeUnit.SECONDS);
            }
        };
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
