package io.outbox4j.publisher.kafka;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * The configuration of a publisher's own producer: durable defaults, the user's settings, and the
 * checks.
 */
final class ProducerSettings {
    static final String DELIVERY_TIMEOUT = ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG;
    static final int DEFAULT_DELIVERY_TIMEOUT_MS = 30_000;
    private static final int KAFKA_DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

    /**
     * Settings the publisher owns: it needs byte-array records and does not run producer
     * transactions.
     */
    private static final List<String> RESERVED =
            List.of(
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG);

    private ProducerSettings() {}

    static int millis(Duration d, String field) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(field + " must be positive, but was " + d);
        }
        if (d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException(
                    field + " must be at most " + Integer.MAX_VALUE + " ms, but was " + d);
        }
        return (int) Math.max(1, d.toMillis());
    }

    /**
     * Merges the durable defaults with the user's properties and checks the result.
     *
     * @return the producer configuration
     */
    static Map<String, Object> resolve(
            @Nullable String bootstrapServers, Map<String, Object> user, boolean allowWeaker) {
        for (String name : RESERVED) {
            if (user.containsKey(name)) {
                throw new IllegalArgumentException(
                        "producer property '"
                                + name
                                + "' cannot be set: "
                                + (name.equals(ProducerConfig.TRANSACTIONAL_ID_CONFIG)
                                        ? "KafkaPublisher does not use producer transactions (the outbox already gives"
                                                + " at-least-once delivery; consumers deduplicate on the outbox-id header)"
                                        : "KafkaPublisher sends keys and values as byte arrays"));
            }
        }
        Object givenServers = user.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
        if (bootstrapServers != null && givenServers != null) {
            throw new IllegalArgumentException(
                    "bootstrap servers given twice: bootstrapServers('"
                            + bootstrapServers
                            + "') and producer property bootstrap.servers='"
                            + givenServers
                            + "'; give one");
        }
        if (bootstrapServers == null && givenServers == null) {
            throw new IllegalArgumentException(
                    "bootstrapServers must be set (or give an existing producer(...))");
        }

        Map<String, Object> config = new LinkedHashMap<>();
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(DELIVERY_TIMEOUT, DEFAULT_DELIVERY_TIMEOUT_MS);
        if (allowWeaker
                && user.containsKey(ProducerConfig.ACKS_CONFIG)
                && !isAll(user.get(ProducerConfig.ACKS_CONFIG))
                && !user.containsKey(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG)) {
            // the idempotent producer requires acks=all; a user who lowered acks on purpose gets it
            // off by default
            config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        }
        config.putAll(user);
        if (bootstrapServers != null) {
            config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        }
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);

        Map<String, Object> parsed = parse(config);
        int deliveryMs = (Integer) Objects.requireNonNull(parsed.get(DELIVERY_TIMEOUT));
        long lingerMs =
                ((Number) Objects.requireNonNull(parsed.get(ProducerConfig.LINGER_MS_CONFIG)))
                        .longValue();
        if (!user.containsKey(ProducerConfig.MAX_BLOCK_MS_CONFIG)) {
            config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, deliveryMs);
        }
        if (!user.containsKey(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG)) {
            config.put(
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG,
                    (int)
                            Math.max(
                                    1,
                                    Math.min(
                                            KAFKA_DEFAULT_REQUEST_TIMEOUT_MS,
                                            deliveryMs - lingerMs)));
        }
        int requestMs =
                (Integer)
                        Objects.requireNonNull(
                                parse(config).get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG));
        if (deliveryMs < lingerMs + requestMs) {
            throw new IllegalArgumentException(
                    "deliveryTimeout (delivery.timeout.ms) must be at least linger.ms"
                            + " + request.timeout.ms = "
                            + (lingerMs + requestMs)
                            + " ms, but was "
                            + deliveryMs
                            + " ms");
        }
        if (!allowWeaker) {
            refuseWeaker(parsed);
        }
        return config;
    }

    private static void refuseWeaker(Map<String, Object> parsed) {
        Object acks = parsed.get(ProducerConfig.ACKS_CONFIG);
        if (!isAll(acks)) {
            throw new IllegalArgumentException(
                    "producer property acks="
                            + acks
                            + " weakens durability:"
                            + " KafkaPublisher reports a message published only once all in-sync replicas have it (acks=all);"
                            + " call allowWeakerDurability() to accept acks="
                            + acks);
        }
        if (!Boolean.TRUE.equals(parsed.get(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG))) {
            throw new IllegalArgumentException(
                    "producer property enable.idempotence=false weakens durability:"
                            + " without the idempotent producer, internal retries can duplicate or reorder records of one key;"
                            + " call allowWeakerDurability() to accept it");
        }
    }

    private static boolean isAll(@Nullable Object acks) {
        String a = String.valueOf(acks).strip().toLowerCase(Locale.ROOT);
        return a.equals("all") || a.equals("-1");
    }

    private static Map<String, Object> parse(Map<String, Object> config) {
        try {
            return ProducerConfig.configDef().parse(config);
        } catch (KafkaException e) {
            throw new IllegalArgumentException(
                    "invalid producer configuration: " + e.getMessage(), e);
        }
    }

    static Producer<byte[], byte[]> create(Map<String, Object> config) {
        try {
            return new KafkaProducer<>(config);
        } catch (KafkaException e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            throw new IllegalArgumentException(
                    "could not create the Kafka producer: " + root.getMessage(), e);
        }
    }
}
