package io.outbox4j.spring.boot;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.publisher.rabbitmq.RabbitMqPublisher;
import io.outbox4j.publisher.sqs.SqsPublisher;
import io.outbox4j.spring.boot.OutboxProperties.PublisherProperties;
import io.outbox4j.spring.boot.OutboxProperties.PublisherType;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;

/**
 * Builds the publisher that {@code outbox4j.publisher.*} describes. Each transport lives in its own
 * nested class, loaded only when its adapter jar is on the classpath.
 */
final class Publishers {
    private static final Pattern BOOTSTRAP =
            Pattern.compile(
                    "[A-Za-z0-9._\\-\\[\\]:]+:\\d{1,5}(\\s*,\\s*[A-Za-z0-9._\\-\\[\\]:]+:\\d{1,5})*");

    private Publishers() {}

    /**
     * Which transport the settings under {@code outbox4j.<prefix>} describe.
     *
     * @return the transport, or null when no publisher setting is given
     */
    static @Nullable PublisherType resolve(String prefix, PublisherProperties p) {
        List<PublisherType> given = new ArrayList<>();
        if (Checks.text(p.getKafka().getBootstrapServers()) != null) {
            given.add(PublisherType.KAFKA);
        }
        if (Checks.text(p.getRabbitmq().getUri()) != null) {
            given.add(PublisherType.RABBITMQ);
        }
        if (Checks.text(p.getSqs().getEndpoint()) != null
                || Checks.text(p.getSqs().getRegion()) != null) {
            given.add(PublisherType.SQS);
        }
        PublisherType type = p.getType() == null ? PublisherType.AUTO : p.getType();
        if (type != PublisherType.AUTO) {
            return type;
        }
        if (given.size() > 1) {
            throw Checks.invalid(
                    prefix + ".type",
                    "auto",
                    "settings are given for "
                            + given.toString().toLowerCase(java.util.Locale.ROOT)
                            + "; set "
                            + Checks.name(prefix + ".type")
                            + " to the one the relay publishes to");
        }
        return given.isEmpty() ? null : given.get(0);
    }

    /** Whether any setting names a transport. */
    static boolean given(PublisherProperties p) {
        return p.getType() != PublisherType.AUTO
                || Checks.text(p.getKafka().getBootstrapServers()) != null
                || Checks.text(p.getRabbitmq().getUri()) != null
                || Checks.text(p.getSqs().getEndpoint()) != null
                || Checks.text(p.getSqs().getRegion()) != null;
    }

    /** Builds the publisher of a resolved type, checking its settings. */
    static Publisher create(
            String prefix, PublisherType type, PublisherProperties p, String connectionName) {
        return switch (type) {
            case KAFKA -> {
                requireJar(
                        "io.outbox4j.publisher.kafka.KafkaPublisher",
                        "outbox-publisher-kafka",
                        prefix + ".kafka.bootstrap-servers");
                yield Kafka.create(prefix, p.getKafka());
            }
            case RABBITMQ -> {
                requireJar(
                        "io.outbox4j.publisher.rabbitmq.RabbitMqPublisher",
                        "outbox-publisher-rabbitmq",
                        prefix + ".rabbitmq.uri");
                yield Rabbit.create(prefix, p.getRabbitmq(), connectionName);
            }
            case SQS -> {
                requireJar(
                        "io.outbox4j.publisher.sqs.SqsPublisher",
                        "outbox-publisher-sqs",
                        prefix + ".sqs.endpoint");
                yield Sqs.create(prefix, p.getSqs());
            }
            default -> throw new IllegalStateException("no publisher type resolved");
        };
    }

    private static void requireJar(String className, String artifact, String property) {
        if (!ClassUtils.isPresent(className, Publishers.class.getClassLoader())) {
            throw Checks.invalid(
                    property,
                    null,
                    "this publisher needs io.outbox4j:" + artifact + " on the classpath; add it");
        }
    }

    /** {@code amqp://user:secret@host} → {@code amqp://***@host}. */
    static String mask(@Nullable String uri) {
        return uri == null ? "" : uri.replaceFirst("(?<=://)[^@/]*@", "***@");
    }

    private static final class Kafka {
        static Publisher create(String prefix, OutboxProperties.Kafka k) {
            String servers =
                    Checks.required(
                            prefix + ".kafka.bootstrap-servers",
                            k.getBootstrapServers(),
                            "is required for the Kafka publisher, as in broker1:9092,broker2:9092");
            if (!BOOTSTRAP.matcher(servers).matches()) {
                throw Checks.invalid(
                        prefix + ".kafka.bootstrap-servers",
                        servers,
                        "must list host:port pairs separated by commas, as in broker1:9092,broker2:9092");
            }
            try {
                return KafkaPublisher.builder()
                        .bootstrapServers(servers)
                        .producerProperties(k.getProperties())
                        .build();
            } catch (IllegalArgumentException e) {
                throw Checks.invalid(prefix + ".kafka.properties", k.getProperties().keySet(), e);
            }
        }
    }

    private static final class Rabbit {
        static Publisher create(String prefix, OutboxProperties.Rabbitmq r, String connectionName) {
            String uri =
                    Checks.required(
                            prefix + ".rabbitmq.uri",
                            r.getUri(),
                            "is required for the RabbitMQ publisher, as in amqp://user:pass@host:5672/vhost");
            RabbitMqPublisher.Builder b;
            try {
                b = RabbitMqPublisher.builder().uri(uri).connectionName(connectionName);
            } catch (IllegalArgumentException e) {
                throw Checks.invalid(prefix + ".rabbitmq.uri", mask(uri), e);
            }
            String exchange = Checks.text(r.getExchange());
            if (exchange != null) {
                try {
                    b.exchange(exchange);
                } catch (IllegalArgumentException e) {
                    throw Checks.invalid(prefix + ".rabbitmq.exchange", exchange, e);
                }
            }
            return b.build();
        }
    }

    private static final class Sqs {
        static Publisher create(String prefix, OutboxProperties.Sqs s) {
            String endpoint = Checks.text(s.getEndpoint());
            String region = Checks.text(s.getRegion());
            SqsClientBuilder b = SqsClient.builder();
            if (endpoint != null) {
                URI uri;
                try {
                    uri = URI.create(endpoint);
                } catch (IllegalArgumentException e) {
                    throw Checks.invalid(prefix + ".sqs.endpoint", endpoint, e);
                }
                if (uri.getScheme() == null
                        || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))
                        || uri.getHost() == null) {
                    throw Checks.invalid(
                            prefix + ".sqs.endpoint",
                            endpoint,
                            "must be an http:// or https:// URL with a host, as in http://localhost:9324");
                }
                b.endpointOverride(uri);
                b.region(Region.of(region != null ? region : "us-east-1"));
                if (System.getenv("AWS_ACCESS_KEY_ID") == null
                        && System.getProperty("aws.accessKeyId") == null) {
                    // A local endpoint (ElasticMQ, LocalStack) accepts any credentials.
                    b.credentialsProvider(
                            StaticCredentialsProvider.create(
                                    AwsBasicCredentials.create("outbox4j", "outbox4j")));
                }
            } else if (region != null) {
                b.region(Region.of(region));
            }
            SqsClient client = b.build();
            try {
                return new ClosingPublisher(SqsPublisher.builder().client(client).build(), client);
            } catch (RuntimeException e) {
                client.close();
                throw e;
            }
        }
    }

    /** A publisher that also closes the client it was built on. */
    private static final class ClosingPublisher implements Publisher {
        private final Publisher delegate;
        private final AutoCloseable resource;

        ClosingPublisher(Publisher delegate, AutoCloseable resource) {
            this.delegate = delegate;
            this.resource = resource;
        }

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            return delegate.publish(messages, timeout);
        }

        @Override
        public void close() {
            try {
                delegate.close();
            } finally {
                try {
                    resource.close();
                } catch (Exception e) {
                    // closing anyway
                }
            }
        }

        @Override
        public String toString() {
            return delegate.toString();
        }
    }
}
