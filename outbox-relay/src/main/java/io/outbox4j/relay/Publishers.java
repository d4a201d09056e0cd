package io.outbox4j.relay;

import io.outbox4j.api.Publisher;
import io.outbox4j.cli.internal.Settings;
import io.outbox4j.cli.internal.SettingsException;
import io.outbox4j.cli.internal.StoreConnection;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.publisher.rabbitmq.RabbitMqPublisher;
import io.outbox4j.publisher.sqs.SqsPublisher;
import java.net.URI;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;

/**
 * Builds the publisher a {@code publisher.uri} names:
 *
 * <ul>
 *   <li>{@code kafka://host:9092[,host:9092...]}: {@link KafkaPublisher} with its safe defaults;
 *       {@code publisher.kafka.*} settings are passed to the producer as they are ({@code
 *       publisher.kafka.security.protocol=SASL_SSL}).
 *   <li>{@code amqp://user:pass@host:5672/vhost} or {@code amqps://…}: {@link RabbitMqPublisher},
 *       to {@code publisher.amqp.exchange} (default: the default exchange, a queue per topic).
 *   <li>{@code sqs://host:port} (plain HTTP, e.g. ElasticMQ or LocalStack), {@code
 *       sqs+https://host[:port]}, or {@code sqs://aws} for AWS itself: {@link SqsPublisher}, a
 *       queue per topic. Region from {@code publisher.sqs.region}, else the SDK's (AWS_REGION);
 *       credentials from the SDK's default chain (static dummies for a local endpoint without
 *       AWS_ACCESS_KEY_ID).
 * </ul>
 */
final class Publishers {
    private Publishers() {}

    /** A publisher and what must be closed after it. */
    record Opened(Publisher publisher, String description, AutoCloseable extra)
            implements AutoCloseable {
        @Override
        public void close() {
            try {
                publisher.close();
            } catch (Exception e) {
                // closing anyway
            }
            try {
                extra.close();
            } catch (Exception e) {
                // closing anyway
            }
        }
    }

    /** Checks the URI without connecting. */
    static void check(String uri, Settings settings) {
        kind(uri);
        if (!kind(uri).equals("kafka")
                && !settings.passthrough(RelayConfig.PUBLISHER_KAFKA).isEmpty()) {
            throw new SettingsException(
                    RelayConfig.PUBLISHER_KAFKA
                            + "* settings apply to a kafka:// publisher only, but "
                            + RelayConfig.PUBLISHER_URI
                            + " is '"
                            + StoreConnection.mask(uri)
                            + "'");
        }
        if (kind(uri).equals("kafka")) {
            bootstrap(uri);
        } else if (kind(uri).equals("sqs")) {
            sqsEndpoint(uri);
        }
    }

    static Opened open(String uri, Settings settings, Map<String, String> env) {
        switch (kind(uri)) {
            case "kafka" -> {
                KafkaPublisher.Builder b =
                        KafkaPublisher.builder().bootstrapServers(bootstrap(uri));
                Map<String, String> props = settings.passthrough(RelayConfig.PUBLISHER_KAFKA);
                props.forEach(b::producerProperty);
                KafkaPublisher p = b.build();
                return new Opened(p, "Kafka " + bootstrap(uri), () -> {});
            }
            case "amqp" -> {
                RabbitMqPublisher.Builder b =
                        RabbitMqPublisher.builder().uri(uri).connectionName("outbox4j-relay");
                settings.text(RelayConfig.PUBLISHER_AMQP_EXCHANGE).ifPresent(b::exchange);
                return new Opened(b.build(), "RabbitMQ " + StoreConnection.mask(uri), () -> {});
            }
            default -> {
                Optional<URI> endpoint = sqsEndpoint(uri);
                SqsClientBuilder b = SqsClient.builder();
                Optional<String> region = settings.text(RelayConfig.PUBLISHER_SQS_REGION);
                if (endpoint.isPresent()) {
                    b.endpointOverride(endpoint.get());
                    b.region(Region.of(region.orElse(env.getOrDefault("AWS_REGION", "us-east-1"))));
                    if (env.get("AWS_ACCESS_KEY_ID") == null) {
                        b.credentialsProvider(
                                StaticCredentialsProvider.create(
                                        AwsBasicCredentials.create("outbox4j", "outbox4j")));
                    }
                } else {
                    region.ifPresent(r -> b.region(Region.of(r)));
                }
                SqsClient client = b.build();
                try {
                    SqsPublisher p = SqsPublisher.builder().client(client).build();
                    return new Opened(
                            p, "SQS " + endpoint.map(URI::toString).orElse("(AWS)"), client);
                } catch (RuntimeException e) {
                    client.close();
                    throw e;
                }
            }
        }
    }

    private static String kind(String uri) {
        String lower = uri.toLowerCase(Locale.ROOT);
        if (lower.startsWith("kafka://")) {
            return "kafka";
        }
        if (lower.startsWith("amqp://") || lower.startsWith("amqps://")) {
            return "amqp";
        }
        if (lower.startsWith("sqs://")
                || lower.startsWith("sqs+https://")
                || lower.startsWith("sqs+http://")) {
            return "sqs";
        }
        throw new SettingsException(
                RelayConfig.PUBLISHER_URI
                        + " must start with kafka://, amqp://, amqps://, sqs:// or sqs+https://, but was '"
                        + StoreConnection.mask(uri)
                        + "'");
    }

    /** {@code kafka://a:9092,b:9092/} → {@code a:9092,b:9092}. */
    static String bootstrap(String uri) {
        String rest = uri.substring("kafka://".length());
        int end = rest.length();
        for (char c : new char[] {'/', '?'}) {
            int i = rest.indexOf(c);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        String servers = rest.substring(0, end).strip();
        for (String server : servers.split(",", -1)) {
            if (!server.strip().matches("[A-Za-z0-9._\\-\\[\\]:]+:\\d{1,5}")) {
                throw new SettingsException(
                        RelayConfig.PUBLISHER_URI
                                + " must list host:port pairs, as in kafka://broker1:9092,broker2:9092, but was '"
                                + uri
                                + "'");
            }
        }
        return servers;
    }

    /** The endpoint of an {@code sqs://} URI; empty for {@code sqs://aws} (the SDK's own). */
    static Optional<URI> sqsEndpoint(String uri) {
        URI u;
        try {
            u = URI.create(uri.strip());
        } catch (IllegalArgumentException e) {
            throw new SettingsException(
                    RelayConfig.PUBLISHER_URI + " is not a valid URI: '" + uri + "'");
        }
        if (u.getHost() == null) {
            throw new SettingsException(
                    RelayConfig.PUBLISHER_URI
                            + " needs a host, as in sqs://localhost:9324 or sqs://aws, but was '"
                            + uri
                            + "'");
        }
        String scheme = u.getScheme().toLowerCase(Locale.ROOT);
        if (scheme.equals("sqs") && u.getHost().equalsIgnoreCase("aws") && u.getPort() < 0) {
            return Optional.empty();
        }
        String http = scheme.equals("sqs+https") ? "https" : "http";
        return Optional.of(
                URI.create(
                        http + "://" + u.getHost() + (u.getPort() < 0 ? "" : ":" + u.getPort())));
    }
}
