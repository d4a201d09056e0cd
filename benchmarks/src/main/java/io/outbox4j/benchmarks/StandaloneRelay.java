package io.outbox4j.benchmarks;

import io.outbox4j.testservices.ServerSupport;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A standalone relay process ({@code outbox4j relay}, the {@code outbox-relay} module) in a JVM of
 * its own over one outbox table of the benchmark database, publishing to the benchmark's Kafka: how
 * users deploy a relay apart from the application that writes the outbox.
 *
 * @param process the child JVM
 * @param url its readiness endpoint
 * @param log its log file
 * @param name its name (the JVM's and the log's; the relay's owner is {@code bench-<name>})
 */
record StandaloneRelay(Process process, String url, Path log, String name) {

    /**
     * Starts one relay process; {@link #awaitReady()} waits until it answers.
     *
     * @param pollInterval {@code relay.poll-interval} (e.g. {@code 100ms}), or null for the relay's
     *     default
     */
    static StandaloneRelay start(
            Env env, String name, String table, @Nullable String pollInterval, Path logs) {
        Env.Database db = env.database();
        int port = ServerSupport.freePort();
        Map<String, String> e = new HashMap<>();
        e.put("OUTBOX4J_STORE_URL", db.url());
        e.put("OUTBOX4J_STORE_USER", db.user());
        e.put("OUTBOX4J_STORE_PASSWORD", db.password());
        e.put("OUTBOX4J_STORE_TABLE", table);
        e.put("OUTBOX4J_PUBLISHER_URI", "kafka://" + env.kafka().bootstrapServers());
        e.put("OUTBOX4J_RELAY_OWNER", "bench-" + name);
        if (pollInterval != null) {
            e.put("OUTBOX4J_RELAY_POLL_INTERVAL", pollInterval);
        }
        e.put("OUTBOX4J_HTTP_HOST", "127.0.0.1");
        e.put("OUTBOX4J_HTTP_PORT", Integer.toString(port));
        e.put("OUTBOX4J_METRICS_STORE_STATISTICS", "false");
        Process p = ChildJvms.java(name, "512m", e, logs, "io.outbox4j.relay.Outbox4j", "relay");
        return new StandaloneRelay(
                p, "http://127.0.0.1:" + port + "/health/ready", ChildJvms.log(logs, name), name);
    }

    /** Waits until the relay answers its readiness endpoint with 200. */
    void awaitReady() {
        ChildJvms.await(process, () -> ScaleScenario.get(url) == 200, log, "relay " + name);
    }

    void stop() {
        ChildJvms.stop(process);
    }
}
