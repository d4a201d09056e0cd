package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.outbox4j.api.Message;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The {@code outbox} health sees a dead broker: a real Kafka broker (private to this test) is
 * stopped while one message waits for it, and the health turns DOWN within {@code
 * outbox4j.health.max-publish-stall} of the message's first try, though the store shows it only as
 * {@code delayed} or {@code leased} between tries; it is UP again once the broker is back and the
 * message is published. The transcript of the health's answers is printed.
 */
class OutboxHealthBrokerDownTest {
    /**
     * Long enough for several failed calls before DOWN (about three: 1 s each plus a backoff of 1
     * to 2 s), as with the defaults scaled down.
     */
    private static final Duration MAX_PUBLISH_STALL = Duration.ofSeconds(5);

    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(1);
    private static final String TOPIC = "orders-health";

    private static KafkaServer kafka;

    @BeforeAll
    static void broker() {
        kafka = KafkaServer.startEmbedded();
        kafka.createTopic(TOPIC, 1, Map.of());
    }

    @AfterAll
    static void closeBroker() {
        if (kafka != null) {
            kafka.close();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    @Test
    @DisplayName(
            "broker stopped with one message in flight: health UP -> DOWN within max-publish-stall, UP after the broker returns")
    void stoppedBroker_healthDownWithinTheBound_upAfterItReturns() {
        PostgresServer pg = PostgresServer.shared();
        String url = pg.createDatabase("outbox_health_broker");
        List<String> transcript = new ArrayList<>();
        try (ConfigurableApplicationContext app =
                new SpringApplicationBuilder(App.class)
                        .properties(
                                "spring.main.banner-mode=off",
                                "spring.datasource.url=" + url,
                                "spring.datasource.username=" + pg.user(),
                                "spring.datasource.password=" + pg.password(),
                                "outbox4j.store.jdbc.create-schema=true",
                                "outbox4j.publisher.kafka.bootstrap-servers="
                                        + kafka.bootstrapServers(),
                                "outbox4j.relay.delivery-timeout="
                                        + DELIVERY_TIMEOUT.toMillis()
                                        + "ms",
                                "outbox4j.relay.backoff-base=1s",
                                "outbox4j.relay.backoff-max=2s",
                                "outbox4j.relay.max-attempts=1000",
                                "outbox4j.health.max-publish-stall="
                                        + MAX_PUBLISH_STALL.toSeconds()
                                        + "s",
                                "outbox4j.health.statistics-cache-ttl=0s")
                        .run()) {
            HealthIndicator health = app.getBean("outboxHealthIndicator", HealthIndicator.class);
            TransactionTemplate tx = app.getBean(TransactionTemplate.class);
            TransactionalOutbox outbox = app.getBean(TransactionalOutbox.class);

            tx.executeWithoutResult(t -> outbox.enqueue(order("o-1")));
            await(
                    health,
                    transcript,
                    "o-1 published, UP",
                    Duration.ofSeconds(30),
                    h -> published(h));

            kafka.stop();
            transcript.add("-- broker stopped");
            Instant enqueued = Instant.now();
            tx.executeWithoutResult(t -> outbox.enqueue(order("o-2")));
            Health down =
                    await(
                            health,
                            transcript,
                            "DOWN",
                            MAX_PUBLISH_STALL.plus(Duration.ofSeconds(20)),
                            h -> h.getStatus().equals(Status.DOWN));
            Duration tookToDown = Duration.between(enqueued, Instant.now());
            transcript.add("-- DOWN " + tookToDown.toMillis() + " ms after the enqueue");
            assertThat(tookToDown)
                    .as("DOWN within max-publish-stall (+ 3 s for the first claim and the probes)")
                    .isLessThanOrEqualTo(MAX_PUBLISH_STALL.plus(Duration.ofSeconds(3)));
            assertThat(down.getDetails().get("reason").toString())
                    .startsWith("publishing has been stalled for")
                    .contains("failed publisher call(s) in a row");
            assertThat(
                            (long) down.getDetails().get("ready")
                                    + (long) down.getDetails().get("leased"))
                    .as("one message waits, and it is the only one")
                    .isLessThanOrEqualTo(1);

            kafka.start();
            transcript.add("-- broker started");
            await(health, transcript, "UP again", Duration.ofSeconds(60), h -> published(h));
        } finally {
            System.out.println("outbox health transcript:\n  " + String.join("\n  ", transcript));
        }
    }

    private static boolean published(Health h) {
        return h.getStatus().equals(Status.UP)
                && Long.valueOf(0).equals(h.getDetails().get("ready"))
                && Long.valueOf(0).equals(h.getDetails().get("delayed"))
                && Long.valueOf(0).equals(h.getDetails().get("leased"));
    }

    /** What the transcript shows a new line for: the store's counts and the failed calls. */
    private static String counts(Health h) {
        Map<String, Object> d = h.getDetails();
        Object publishing = d.get("publishing");
        return d.get("ready")
                + "/"
                + d.get("delayed")
                + "/"
                + d.get("leased")
                + "/"
                + (publishing instanceof Map<?, ?> p ? p.get("failedCallsInARow") : null);
    }

    private static Message order(String id) {
        return Message.builder()
                .id(id)
                .topic(TOPIC)
                .key(id)
                .module("orders")
                .contentType("application/json")
                .payload("{\"order\":\"" + id + "\"}")
                .build();
    }

    /**
     * Probes the health every 250 ms until {@code condition} holds, recording each answer that
     * differs from the one before.
     */
    private static Health await(
            HealthIndicator indicator,
            List<String> transcript,
            String what,
            Duration within,
            Predicate<Health> condition) {
        AtomicReference<Health> last = new AtomicReference<>();
        AtomicReference<String> lastChange = new AtomicReference<>("");
        try {
            Awaitility.await(what)
                    .dontCatchUncaughtExceptions()
                    .atMost(within)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(250))
                    .until(
                            () -> {
                                Health h = indicator.health();
                                last.set(h);
                                String change = h.getStatus() + " " + counts(h);
                                if (!change.equals(lastChange.getAndSet(change))) {
                                    transcript.add(
                                            Instant.now()
                                                    + " "
                                                    + h.getStatus()
                                                    + " "
                                                    + h.getDetails());
                                }
                                return condition.test(h);
                            });
        } catch (ConditionTimeoutException e) {
            Health h = last.get();
            fail(
                    "health not "
                            + what
                            + " within "
                            + within
                            + "; last: "
                            + (h == null ? "none" : h.getStatus() + " " + h.getDetails()));
        }
        return last.get();
    }
}
