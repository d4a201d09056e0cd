package io.outbox4j.testservices;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import org.testcontainers.containers.localstack.LocalStackContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * An SQS-compatible server for the tests, started once per JVM and stopped by a shutdown hook.
 *
 * <p>Resolution order (docs/architecture.md §8):
 *
 * <ol>
 *   <li>{@code OUTBOX4J_SQS_ENDPOINT} (e.g. {@code http://127.0.0.1:4566} for a running LocalStack,
 *       or a real AWS endpoint), with {@code OUTBOX4J_SQS_REGION} (default {@code us-east-1}) and
 *       {@code OUTBOX4J_SQS_ACCESS_KEY_ID} / {@code OUTBOX4J_SQS_SECRET_ACCESS_KEY} (default {@code
 *       test}/{@code test});
 *   <li>LocalStack through Testcontainers when a Docker engine answers ({@code
 *       OUTBOX4J_LOCALSTACK_IMAGE} overrides the image);
 *   <li>ElasticMQ in this JVM ({@code org.elasticmq:elasticmq-rest-sqs_2.13}, on the classpath) on
 *       a free loopback port, with ElasticMQ's strict (AWS-like) limits.
 * </ol>
 *
 * <p>The AWS SDK is not a dependency of this module: build a client from {@link #endpoint()},
 * {@link #region()}, {@link #accessKeyId()} and {@link #secretAccessKey()} (static credentials).
 */
public final class SqsServer {
    private static final String DEFAULT_LOCALSTACK_IMAGE = "localstack/localstack:4.4";
    private static SqsServer shared;

    private final String kind;
    private final URI endpoint;
    private final String region;
    private final String accessKeyId;
    private final String secretAccessKey;

    private SqsServer(
            String kind, URI endpoint, String region, String accessKeyId, String secretAccessKey) {
        this.kind = kind;
        this.endpoint = endpoint;
        this.region = region;
        this.accessKeyId = accessKeyId;
        this.secretAccessKey = secretAccessKey;
    }

    /**
     * Returns the JVM-wide server, starting it on first use.
     *
     * @return the server
     */
    public static synchronized SqsServer shared() {
        if (shared == null) {
            shared = start();
        }
        return shared;
    }

    private static SqsServer start() {
        var external = ServerSupport.env("OUTBOX4J_SQS_ENDPOINT");
        if (external.isPresent()) {
            return new SqsServer(
                    "external",
                    URI.create(external.get()),
                    ServerSupport.env("OUTBOX4J_SQS_REGION").orElse("us-east-1"),
                    ServerSupport.env("OUTBOX4J_SQS_ACCESS_KEY_ID").orElse("test"),
                    ServerSupport.env("OUTBOX4J_SQS_SECRET_ACCESS_KEY").orElse("test"));
        }
        if (ServerSupport.dockerAvailable()) {
            return startLocalStack();
        }
        return startElasticMq();
    }

    @SuppressWarnings("resource") // stopped by the shutdown hook
    private static SqsServer startLocalStack() {
        String image =
                ServerSupport.env("OUTBOX4J_LOCALSTACK_IMAGE").orElse(DEFAULT_LOCALSTACK_IMAGE);
        LocalStackContainer container =
                new LocalStackContainer(DockerImageName.parse(image))
                        .withServices(LocalStackContainer.Service.SQS);
        container.start();
        Runtime.getRuntime()
                .addShutdownHook(new Thread(container::stop, "outbox4j-localstack-stop"));
        return new SqsServer(
                "localstack",
                container.getEndpoint(),
                container.getRegion(),
                container.getAccessKey(),
                container.getSecretKey());
    }

    private static SqsServer startElasticMq() {
        RuntimeException last = null;
        for (int tries = 0; tries < 3; tries++) {
            int port = ServerSupport.freePort();
            try {
                Instant started = Instant.now();
                SQSRestServer server =
                        SQSRestServerBuilder.withPort(port).withInterface("127.0.0.1").start();
                server.waitUntilStarted();
                Runtime.getRuntime()
                        .addShutdownHook(
                                new Thread(server::stopAndWait, "outbox4j-elasticmq-stop"));
                org.slf4j.LoggerFactory.getLogger(SqsServer.class)
                        .info(
                                "ElasticMQ up on 127.0.0.1:{} in {} ms",
                                port,
                                Duration.between(started, Instant.now()).toMillis());
                return new SqsServer(
                        "elasticmq",
                        URI.create("http://127.0.0.1:" + port),
                        "us-east-1",
                        "test",
                        "test");
            } catch (
                    RuntimeException
                            e) { // a port taken between freePort() and bind: try another one
                last = e;
            }
        }
        throw ServerSupport.unavailable(
                "SQS (ElasticMQ in the test JVM)",
                "ElasticMQ failed to start ("
                        + last
                        + "); set OUTBOX4J_SQS_ENDPOINT to an SQS-compatible endpoint");
    }

    /**
     * Tells which server this is.
     *
     * @return {@code external}, {@code localstack} or {@code elasticmq}
     */
    public String kind() {
        return kind;
    }

    /**
     * Returns the endpoint to give the AWS SDK ({@code endpointOverride}).
     *
     * @return the HTTP endpoint
     */
    public URI endpoint() {
        return endpoint;
    }

    /**
     * Returns the region to configure the client with.
     *
     * @return the region id, e.g. {@code us-east-1}
     */
    public String region() {
        return region;
    }

    /**
     * Returns the static access key id the server accepts.
     *
     * @return the access key id
     */
    public String accessKeyId() {
        return accessKeyId;
    }

    /**
     * Returns the static secret access key the server accepts.
     *
     * @return the secret access key
     */
    public String secretAccessKey() {
        return secretAccessKey;
    }

    /**
     * Tells whether the server is ElasticMQ in this JVM (whose behaviour differs from AWS in a few
     * places, e.g. an oversized batch entry rejects the whole batch).
     *
     * @return {@code true} for the in-JVM ElasticMQ
     */
    public boolean isElasticMq() {
        return "elasticmq".equals(kind);
    }

    @Override
    public String toString() {
        return "SqsServer[" + kind + " " + endpoint + " " + region + "]";
    }
}
