package io.outbox4j.benchmarks;

import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
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
 * batch. That loop is the weak baseline (batch 100, one thread). In the same rounds, order
 * rotating: the competent hand-written relay of issue 27 ({@link Drains#competent}: batch 500, 1
 * and 2 workers sharing one producer, as many messages as the others); the peer gruelbox
 * transaction-outbox 4.2.268 ({@link Gruelbox}), draining a backlog loaded through it from its own
 * table, one scheduled call (one record sent and awaited) per message, {@code 1/}{@value
 * #GRUELBOX_SHARE} of the others' count per round; and the peer namastack-outbox 1.6.0 ({@link
 * Namastack}), as many messages as gruelbox, loaded through its own {@code schedule}.
 */
final class EndToEndScenario {
    static final String SUBJECT = "e2e_outbox";
    static final String HAND = "e2e_hand";
    static final String KAFKA_TOPIC = "bench-e2e";

    /**
     * gruelbox drains this fraction of the others' messages per round (and of the warm-up): one
     * record sent and awaited per message makes it an order of magnitude slower, and its rate is
     * per second like theirs.
     */
    static final int GRUELBOX_SHARE = 5;

    /** Worker counts of the competent hand-written relay (issue 27, item 4). */
    static final List<Integer> COMPETENT_WORKERS = List.of(1, 2);

    /** The diagnostic side: the relay over messages without keys (table and label). */
    static final String UNKEYED = "e2e_unkeyed";

    static final String UNKEYED_LABEL = "outbox4j-unkeyed";

    /** The label of the namastack-outbox side. */
    static final String NAMASTACK = "namastack";

    /** How the weak hand-written loop is named in figures and checks. */
    static final String WEAK = "hand-written weak loop (batch 100, 1 thread)";

    private EndToEndScenario() {}

    static String competentTable(int workers) {
        return "e2e_competent_" + workers;
    }

    static String competentLabel(int workers) {
        return "competent-" + workers;
    }

    static String competentKey(int workers) {
        return "competent" + workers;
    }

    static String competentName(int workers) {
        return "hand-written competent relay (batch "
                + Drains.COMPETENT_BATCH
                + ", "
                + workers
                + (workers == 1 ? " worker)" : " workers, one producer)");
    }

    static Result run(Env env) {
        Options o = env.options;
        int n = o.size("e2e-messages");
        int batch = o.size("batch");
        int payload = o.size("payload");
        int rounds = o.size("rounds");
        Result r =
                new Result(
                                "e2e",
                                "End to end: PostgreSQL -> relay -> Kafka vs hand-written"
                                        + " claim/send/flush/await/delete (weak and competent)"
                                        + ", gruelbox transaction-outbox and namastack-outbox")
                        .config("messages", n)
                        .config("hand_batch", batch)
                        .config("payload_bytes", payload)
                        .config("rounds", rounds)
                        .config("relay", Drains.relaySettings())
                        .config("kafka_topic_partitions", 1)
                        .config(
                                "producer",
                                "acks=all, enable.idempotence=true, other settings Kafka defaults (both sides)");
        int warm = Math.min(o.size("warmup-messages") / 4, n);
        int gruelboxN = Math.max(1, n / GRUELBOX_SHARE);
        int gruelboxWarm = Math.max(1, warm / GRUELBOX_SHARE);
        r.config("namastack", Namastack.settings());
        r.config("gruelbox", Gruelbox.settings())
                .config("gruelbox_messages", gruelboxN)
                .config(
                        "gruelbox_loaded",
                        "through gruelbox: schedule() in transactions of "
                                + Env.LOAD_CHUNK
                                + " with the post-commit submission discarded and a clock a day"
                                + " behind (so every call is due), then drained by flush()");
        JdbiOutboxStore store = env.store(SUBJECT);
        JdbiOutboxStore unkeyedStore = env.store(UNKEYED);
        env.handTable(HAND, SUBJECT);
        for (int workers : COMPETENT_WORKERS) {
            env.handTable(competentTable(workers), SUBJECT);
        }
        Gruelbox.dropTables(env);
        Namastack.dropTables(env);
        env.kafka().createTopic(KAFKA_TOPIC, 1, Map.of());
        Drains.Comparison c;
        try (KafkaPublisher publisher =
                        KafkaPublisher.builder()
                                .bootstrapServers(env.kafka().bootstrapServers())
                                .topicMapper(m -> KAFKA_TOPIC)
                                .build();
                KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(producerProperties(env));
                KafkaProducer<byte[], byte[]> gruelboxProducer =
                        new KafkaProducer<>(Gruelbox.producerProperties(env));
                Namastack namastack = new Namastack(env, KAFKA_TOPIC)) {
            Drains.Send send = kafkaSend(producer, KAFKA_TOPIC);
            Gruelbox.KafkaSender sender =
                    new Gruelbox.KafkaSender(gruelboxProducer, KAFKA_TOPIC, null);
            List<Drains.Peer> peers = new ArrayList<>();
            for (int workers : COMPETENT_WORKERS) {
                String table = competentTable(workers);
                // the weak loop's producer: the sides run one after the other, never together
                peers.add(
                        new Drains.Peer(
                                competentLabel(workers),
                                table,
                                n,
                                warm,
                                (prefix, count) -> env.load(table, prefix, count, payload, false),
                                count -> Drains.competent(env, table, workers, send),
                                () -> env.count(table)));
            }
            // Diagnostic: the same relay and publisher over messages without keys, so per-key
            // order (predecessor probes, parking, bucket-locked completions) has nothing to do:
            // the ratio keyed / unkeyed is what order costs end to end.
            peers.add(
                    new Drains.Peer(
                            UNKEYED_LABEL,
                            UNKEYED,
                            n,
                            warm,
                            (prefix, count) -> env.load(UNKEYED, prefix, count, payload, false, 0),
                            count -> Drains.relay(env, unkeyedStore, publisher, count),
                            () -> env.count(UNKEYED)));
            peers.add(
                    new Drains.Peer(
                            "gruelbox",
                            Gruelbox.TABLE,
                            gruelboxN,
                            gruelboxWarm,
                            (prefix, count) -> Gruelbox.load(env, prefix, count, payload),
                            count -> Gruelbox.drain(env, sender, count),
                            () -> env.count(Gruelbox.TABLE)));
            peers.add(
                    new Drains.Peer(
                            NAMASTACK,
                            Namastack.TABLE,
                            gruelboxN,
                            gruelboxWarm,
                            (prefix, count) -> namastack.load(prefix, count, payload),
                            count -> namastack.drain(env, count),
                            () -> Namastack.incomplete(env)));
            c =
                    Drains.sideBySide(
                            env, "e2e", store, SUBJECT, HAND, publisher, send, n, warm, batch,
                            payload, rounds, peers);
        }
        List<Double> relayRates = c.relayRates;
        List<Double> handRates = c.handRates;
        List<Double> gruelboxRates = c.peerRates.get("gruelbox");
        Drains.Breakdown relaySide = c.relaySide;
        Drains.Breakdown handSide = c.handSide;
        double relay = Stats.median(relayRates);
        double hand = Stats.median(handRates);
        double gruelbox = Stats.median(gruelboxRates);
        List<Double> namastackRates = c.peerRates.get(NAMASTACK);
        double namastack = Stats.median(namastackRates);
        r.figure("relay_msgs_per_s", "outbox4j relay + KafkaPublisher (median)", relay, "msg/s")
                .figure("hand_msgs_per_s", WEAK + " + KafkaProducer (median)", hand, "msg/s");
        for (int workers : COMPETENT_WORKERS) {
            r.figure(
                    competentKey(workers) + "_msgs_per_s",
                    competentName(workers) + " + one KafkaProducer (median)",
                    Stats.median(c.peerRates.get(competentLabel(workers))),
                    "msg/s");
        }
        r.figure(
                "gruelbox_msgs_per_s",
                "gruelbox transaction-outbox 4.2.268 (median; 1/"
                        + GRUELBOX_SHARE
                        + " of the messages per round)",
                gruelbox,
                "msg/s");
        r.figure(
                "namastack_msgs_per_s",
                "namastack-outbox "
                        + Namastack.VERSION
                        + " (median; 1/"
                        + GRUELBOX_SHARE
                        + " of the messages per round)",
                namastack,
                "msg/s");
        relaySide.report(r, "relay", "relay", "complete()");
        handSide.report(r, "hand", WEAK, "delete");
        for (int workers : COMPETENT_WORKERS) {
            c.peerSides
                    .get(competentLabel(workers))
                    .report(r, competentKey(workers), competentName(workers), "delete");
        }
        c.peerSides
                .get(UNKEYED_LABEL)
                .report(r, "unkeyed", "outbox4j relay, messages without keys", "complete()");
        r.figure(
                "keyed_vs_unkeyed",
                "diagnostic: relay over keyed / over unkeyed messages (what per-key order costs;"
                        + " median of per-round ratios)",
                Stats.medianRatio(relayRates, c.peerRates.get(UNKEYED_LABEL)),
                "");
        c.peerSides.get("gruelbox").reportCpu(r, "gruelbox", "gruelbox");
        c.peerSides.get(NAMASTACK).reportCpu(r, "namastack", "namastack-outbox");
        r.check(
                "relay / hand-written weak loop (median of rounds)",
                Stats.medianRatio(relayRates, handRates),
                ">=",
                1.0);
        for (int workers : COMPETENT_WORKERS) {
            r.check(
                    "relay / hand-written competent, "
                            + workers
                            + (workers == 1 ? " worker" : " workers")
                            + " (median of rounds)",
                    Stats.medianRatio(relayRates, c.peerRates.get(competentLabel(workers))),
                    ">=",
                    1.0);
        }
        r.check(
                "relay / gruelbox (median of rounds)",
                Stats.medianRatio(relayRates, gruelboxRates),
                ">=",
                10.0);
        r.check(
                "relay / namastack-outbox (median of rounds)",
                Stats.medianRatio(relayRates, namastackRates),
                ">=",
                1.0);
        String rate = "e2e: PostgreSQL → Kafka drain, msg/s (median of rounds)";
        String ratio = "e2e: outbox4j relay / this side (median of per-round ratios)";
        String cpu = "e2e: CPU per message, JVM (in-JVM broker included) + PostgreSQL, µs";
        Map<String, String> labels = new java.util.LinkedHashMap<>();
        labels.put(Report.COMPETENT_1, competentLabel(1));
        labels.put(Report.COMPETENT_2, competentLabel(2));
        labels.put(Report.GRUELBOX, "gruelbox");
        labels.put(Report.NAMASTACK, NAMASTACK);
        r.peer(rate, Report.WEAK, Result.fmt(hand))
                .peer(
                        ratio,
                        Report.WEAK,
                        Result.fmt(Stats.medianRatio(relayRates, handRates)) + "×")
                .peer(cpu, Report.WEAK, Result.fmt(handSide.cpuPerMessage()));
        labels.forEach(
                (column, label) ->
                        r.peer(rate, column, Result.fmt(Stats.median(c.peerRates.get(label))))
                                .peer(
                                        ratio,
                                        column,
                                        Result.fmt(
                                                        Stats.medianRatio(
                                                                relayRates, c.peerRates.get(label)))
                                                + "×")
                                .peer(
                                        cpu,
                                        column,
                                        Result.fmt(c.peerSides.get(label).cpuPerMessage())));
        r.peer(rate, Report.OUTBOX4J, Result.fmt(relay))
                .peer(ratio, Report.OUTBOX4J, "1.00×")
                .peer(cpu, Report.OUTBOX4J, Result.fmt(relaySide.cpuPerMessage()));
        r.config("relay_rates", DrainScenario.rounded(relayRates))
                .config("hand_rates", DrainScenario.rounded(handRates));
        for (int workers : COMPETENT_WORKERS) {
            r.config(
                    competentKey(workers) + "_rates",
                    DrainScenario.rounded(c.peerRates.get(competentLabel(workers))));
        }
        r.config("gruelbox_rates", DrainScenario.rounded(gruelboxRates))
                .config("namastack_rates", DrainScenario.rounded(namastackRates));
        r.note(
                "hand-written sides: the weak loop ("
                        + WEAK
                        + ": the store's claim shape with a compare-and-set delete, one claim at a"
                        + " time) and the competent relay (issue 27, item 4: claims "
                        + Drains.COMPETENT_BATCH
                        + " with UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT "
                        + Drains.COMPETENT_BATCH
                        + ") RETURNING ..., sends all, flush(), awaits every ack, DELETE ... WHERE"
                        + " id = ANY(?); 1 worker, and 2 workers sharing one producer); neither"
                        + " keeps per-key order. In a 2-worker side's breakdown the wall time per"
                        + " batch is the drain's wall time over its batches (the workers overlap).");
        r.note(
                "gruelbox drains "
                        + gruelboxN
                        + " messages per round (1/"
                        + GRUELBOX_SHARE
                        + " of the others' "
                        + n
                        + ") in the same rounds, order rotating; its rate is per second like"
                        + " theirs. Its CPU figures cover its flush thread, submitter pool, Kafka"
                        + " producer and PostgreSQL backends alike.");
        r.note(
                "namastack-outbox drains as many messages as gruelbox, loaded through its own"
                        + " schedule(event, key) in transactions of "
                        + Env.LOAD_CHUNK
                        + " while its scheduler is stopped, timed from starting its scheduler to the"
                        + " last record marked COMPLETED (it keeps completed records, its default;"
                        + " its heartbeat, every second, runs while the other sides drain). Its"
                        + " CPU figures cover its scheduler, processing pool, Kafka producer and"
                        + " PostgreSQL backends alike.");
        StringBuilder reference = new StringBuilder(Result.fmt(hand) + " msg/s (" + WEAK + ")");
        for (int workers : COMPETENT_WORKERS) {
            reference
                    .append("; ")
                    .append(Result.fmt(Stats.median(c.peerRates.get(competentLabel(workers)))))
                    .append(" msg/s (")
                    .append(competentName(workers))
                    .append(")");
        }
        reference.append("; ").append(Result.fmt(gruelbox)).append(" msg/s (gruelbox)");
        reference.append("; ").append(Result.fmt(namastack)).append(" msg/s (namastack-outbox)");
        r.headline(Result.fmt(relay) + " msg/s", reference.toString());
        for (int workers : COMPETENT_WORKERS) {
            env.execute("DROP TABLE " + Env.q(competentTable(workers)));
        }
        Namastack.dropTables(env);
        env.execute("DROP TABLE " + Env.q(SUBJECT) + ", " + Env.q(HAND) + ", " + Env.q(UNKEYED));
        Gruelbox.dropTables(env);
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
        return producerProperties(env.kafka().clientProperties());
    }

    /**
     * As {@link #producerProperties(Env)}, for a broker given by its client settings.
     *
     * @param client the client settings
     * @return producer properties
     */
    static Map<String, Object> producerProperties(Map<String, Object> client) {
        Map<String, Object> props = new java.util.HashMap<>(client);
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
                RecordHeaders headers =
                        outboxHeaders(
                                row.id(),
                                row.topic(),
                                row.module(),
                                row.contentType(),
                                row.occurredAt().toInstant());
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

    /**
     * The five outbox headers the publisher puts on every record, as the other sides send them.
     *
     * @param id the message id
     * @param topic the message topic
     * @param module the producing module
     * @param contentType the payload's content type
     * @param occurredAt when the event occurred
     * @return the headers
     */
    static RecordHeaders outboxHeaders(
            String id, String topic, String module, String contentType, Instant occurredAt) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(OutboxHeaders.ID, utf8(id));
        headers.add(OutboxHeaders.TOPIC, utf8(topic));
        headers.add(OutboxHeaders.MODULE, utf8(module));
        headers.add(OutboxHeaders.CONTENT_TYPE, utf8(contentType));
        headers.add(OutboxHeaders.OCCURRED_AT, utf8(occurredAt.toString()));
        return headers;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
