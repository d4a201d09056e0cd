package io.outbox4j.leaktests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox4j.api.Backoff;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryAfterException;
import io.outbox4j.engine.Relay;
import io.outbox4j.micrometer.OutboxMetrics;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.SoftAssertions;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Issue 20: messages whose payload and header values carry a canary secret go through success,
 * retries (a failure, a retry-after), a permanent failure and exhausted attempts (dead letters),
 * with every logger at TRACE (slf4j-simple into {@code target/leak-test.log}, configured in the
 * pom). The canary must appear in no log line, no observation, no meter name, tag or description,
 * no dead-letter reason or last error, no message of an exception for bad input, and no output of
 * the {@code outbox4j} command ({@code stats}, {@code dead-letters list} and {@code show}, tables
 * and JSON) unless the operator asks for the payload or header values ({@code --payload}, {@code
 * --header-values}): those must show it, which proves the checks can see it.
 */
class CanaryLeakTest {
    private static final String CANARY = "CANARY-" + UUID.randomUUID();
    private static final Path LOG =
            Path.of(System.getProperty("org.slf4j.simpleLogger.logFile", "target/leak-test.log"));

    @Test
    void theCanaryNeverLeavesThePayloadOrTheHeaderValues() throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "leak-db"));
        String url =
                "jdbc:h2:file:"
                        + dir.toAbsolutePath().resolve("outbox-" + UUID.randomUUID())
                        + ";AUTO_SERVER=TRUE";
        Jdbi jdbi = Jdbi.create(url, "sa", "");
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();

        // the canary is readable by the checks: the log file is the one slf4j-simple writes
        LoggerFactory.getLogger("leak-self-check").info("self check {}", "LEAK-SELF-CHECK");

        List<Message> messages = new ArrayList<>();
        String[] fates = {"ok", "retry", "retry-after", "permanent", "exhausted"};
        for (String fate : fates) {
            messages.add(
                    Message.builder()
                            .id(fate + "-" + UUID.randomUUID().toString().substring(0, 8))
                            .topic("orders")
                            .key("customer-" + fate)
                            .module("leak-tests")
                            .contentType("application/json")
                            .payload("{\"card\":\"" + CANARY + "\"}")
                            .header("authorization", "Bearer " + CANARY)
                            .header("fate", fate)
                            .build());
        }
        jdbi.useTransaction(h -> store.enqueueAll(h, messages));

        List<String> observations = new CopyOnWriteArrayList<>();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        OutboxMetrics metrics = OutboxMetrics.builder(registry).admin(store).build();
        Relay relay =
                Relay.builder(metrics.store(store), new PlannedPublisher())
                        .observer(
                                new Observer() {
                                    @Override
                                    public void onDelivery(Observation o) {
                                        observations.add(describe(o));
                                        metrics.onDelivery(o);
                                    }

                                    @Override
                                    public void onStoreError(Throwable error) {
                                        observations.add(String.valueOf(error));
                                        metrics.onStoreError(error);
                                    }
                                })
                        .backoff(Backoff.fixed(Duration.ofMillis(50)))
                        .maxAttempts(3)
                        .pollInterval(Duration.ofMillis(20))
                        .build();
        metrics.relay(relay);
        relay.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!finished(store.statistics(Instant.now()).total())) {
            assertThat(System.nanoTime()).as("the relay finished in time").isLessThan(deadline);
            Thread.sleep(20);
        }
        relay.close();
        metrics.refresh();

        List<DeadMessage> dead = store.deadLetters(DeadLetterQuery.all()).items();
        assertThat(dead).as("dead letters: the permanent failure and the exhausted one").hasSize(2);

        SoftAssertions soft = new SoftAssertions();
        // logs
        String log = Files.readString(LOG, StandardCharsets.UTF_8);
        soft.assertThat(log).as("the log file (self check)").contains("LEAK-SELF-CHECK");
        soft.assertThat(log)
                .as("the TRACE/DEBUG log talks about the messages (by id)")
                .contains(messages.get(4).id());
        for (String line : log.split("\n", -1)) {
            soft.assertThat(line).as("log line").doesNotContain(CANARY);
        }
        // observations
        soft.assertThat(observations).as("observations seen").hasSizeGreaterThanOrEqualTo(5);
        for (String o : observations) {
            soft.assertThat(o).as("observation").doesNotContain(CANARY);
        }
        // meters
        soft.assertThat(registry.getMeters()).as("meters").isNotEmpty();
        for (Meter m : registry.getMeters()) {
            soft.assertThat(m.getId().toString()).as("meter id").doesNotContain(CANARY);
            soft.assertThat(String.valueOf(m.getId().getDescription()))
                    .as("meter description of " + m.getId().getName())
                    .doesNotContain(CANARY);
        }
        // dead-letter reasons and last errors
        for (DeadMessage d : dead) {
            soft.assertThat(d.reason()).as("dead-letter reason").doesNotContain(CANARY);
            soft.assertThat(store.lastError(d.message().id()).orElse(""))
                    .as("last error")
                    .doesNotContain(CANARY);
        }
        // the operator command
        String id = dead.get(0).message().id();
        for (List<String> args :
                List.of(
                        List.of("stats"),
                        List.of("stats", "--json"),
                        List.of("dead-letters", "list"),
                        List.of("dead-letters", "list", "--json"),
                        List.of("dead-letters", "show", id),
                        List.of("dead-letters", "show", id, "--json"))) {
            String out = cli(url, args);
            // it printed what it is for: the topic (stats) or the dead letter's id
            soft.assertThat(out)
                    .as("outbox4j %s", args)
                    .contains(args.get(0).equals("stats") ? "orders" : id);
            soft.assertThat(out).as("outbox4j %s", args).doesNotContain(CANARY);
        }
        soft.assertThat(cli(url, List.of("dead-letters", "show", id, "--payload")))
                .as("outbox4j dead-letters show --payload prints what was asked for")
                .contains(CANARY);
        soft.assertThat(cli(url, List.of("dead-letters", "show", id, "--header-values")))
                .as("outbox4j dead-letters show --header-values prints what was asked for")
                .contains(CANARY);
        soft.assertAll();
        metrics.close();
    }

    @Test
    void badInputIsRefusedWithoutEchoingTheSecretValue() {
        Message.Builder tooLongHeader =
                Message.builder()
                        .id("bad-1")
                        .topic("orders")
                        .module("leak-tests")
                        .contentType("text/plain")
                        .payload("x")
                        .header("authorization", CANARY + "x".repeat(70_000));
        assertThatThrownBy(tooLongHeader::build)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(CANARY));
        Message.Builder tooLargePayload =
                Message.builder()
                        .id("bad-2")
                        .topic("orders")
                        .module("leak-tests")
                        .contentType("text/plain")
                        .payload((CANARY + "x".repeat(1_100_000)).getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(tooLargePayload::build)
                .satisfies(e -> assertThat(String.valueOf(e)).doesNotContain(CANARY));
    }

    private static boolean finished(TopicStatistics t) {
        return t.dead() == 2 && t.ready() + t.delayed() + t.leased() == 0;
    }

    /** Everything an observation carries, by its accessors. */
    private static String describe(Observation o) {
        return o + " " + o.messageId() + " " + o.outcome() + " " + o.error();
    }

    /** Succeeds, fails then succeeds, asks for a later retry, fails for good, or always fails. */
    private static final class PlannedPublisher implements Publisher {
        private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

        @Override
        public List<PublishOutcome> publish(List<Message> batch, Duration timeout) {
            List<PublishOutcome> out = new ArrayList<>();
            for (Message m : batch) {
                int call =
                        calls.computeIfAbsent(m.id(), k -> new AtomicInteger()).incrementAndGet();
                String fate = m.headers().get("fate");
                out.add(
                        switch (fate) {
                            case "retry" ->
                                    call < 3
                                            ? PublishOutcome.failed(
                                                    new IOException("broker connection reset"))
                                            : PublishOutcome.published();
                            case "retry-after" ->
                                    call < 2
                                            ? PublishOutcome.failed(
                                                    new RetryAfterException(
                                                            "throttled",
                                                            Duration.ofMillis(100),
                                                            null))
                                            : PublishOutcome.published();
                            case "permanent" ->
                                    PublishOutcome.failed(
                                            new PermanentFailureException(
                                                    "the broker rejected the record"));
                            case "exhausted" ->
                                    PublishOutcome.failed(
                                            new IllegalStateException("topic unavailable"));
                            default -> PublishOutcome.published();
                        });
            }
            return out;
        }

        @Override
        public void close() {}
    }

    /** Runs the operator command in a child JVM against the same database. */
    private static String cli(String url, List<String> args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("io.outbox4j.cli.OutboxCli");
        cmd.addAll(args);
        cmd.addAll(List.of("--store", url, "--user", "sa"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("outbox4j %s ended", args).isTrue();
        assertThat(p.exitValue()).as("outbox4j %s exit code; output: %s", args, out).isZero();
        return out;
    }
}
