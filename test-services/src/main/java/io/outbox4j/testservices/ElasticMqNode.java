package io.outbox4j.testservices;

import java.net.URI;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;

/**
 * A private ElasticMQ server in this JVM that a fault test may stop and start again on the same
 * port (the restart drills). The shared {@link SqsServer} stays up for every other test.
 *
 * <p>ElasticMQ embedded this way keeps its queues in memory: a restart loses the queues and the
 * messages in them, as a real ElasticMQ without its optional persistence does. The drill re-creates
 * its queue after {@link #startAgain()} (what ElasticMQ's queue configuration file does for a
 * deployed server) and accounts for messages the old server had accepted and not yet delivered.
 * Credentials are {@code test}/{@code test}, region {@code us-east-1}.
 */
public final class ElasticMqNode implements AutoCloseable {
    private final int port;
    private SQSRestServer server;

    private ElasticMqNode(int port, SQSRestServer server) {
        this.port = port;
        this.server = server;
    }

    /**
     * Starts a node on a free loopback port.
     *
     * @return the running node; close it to stop it
     */
    public static ElasticMqNode start() {
        RuntimeException last = null;
        for (int tries = 0; tries < 3; tries++) {
            int port = ServerSupport.freePort();
            try {
                return new ElasticMqNode(port, startOn(port));
            } catch (RuntimeException e) { // the port was taken meanwhile: another one
                last = e;
            }
        }
        throw ServerSupport.unavailable(
                "SQS (a private ElasticMQ in the test JVM)",
                "ElasticMQ failed to start (" + last + ")");
    }

    private static SQSRestServer startOn(int port) {
        SQSRestServer s = SQSRestServerBuilder.withPort(port).withInterface("127.0.0.1").start();
        s.waitUntilStarted();
        return s;
    }

    /**
     * Returns the endpoint to give the AWS SDK.
     *
     * @return {@code http://127.0.0.1:<port>}
     */
    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Stops the server (connections are refused until {@link #startAgain()}). */
    public synchronized void stop() {
        if (server != null) {
            server.stopAndWait();
            server = null;
        }
    }

    /** Starts the server again on the same port, with no queues. */
    public synchronized void startAgain() {
        if (server == null) {
            server = startOn(port);
        }
    }

    @Override
    public void close() {
        stop();
    }
}
