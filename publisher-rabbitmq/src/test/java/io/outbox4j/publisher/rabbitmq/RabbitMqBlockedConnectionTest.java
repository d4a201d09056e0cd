package io.outbox4j.publisher.rabbitmq;

import static io.outbox4j.publisher.rabbitmq.Rabbit.message;
import static io.outbox4j.publisher.rabbitmq.Rabbit.messages;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A broker under a resource alarm (memory watermark set to 0 with {@code rabbitmqctl}) blocks
 * publishing connections: it stops reading from their sockets. The publisher must still return by
 * its deadline, fail fast while it knows the connection is blocked, and publish again once the
 * alarm clears.
 */
class RabbitMqBlockedConnectionTest {
    private final List<RabbitMqPublisher> publishers = new ArrayList<>();

    @AfterEach
    void clearAlarmAndClose() {
        try {
            Rabbit.server().rabbitmqctl("set_vm_memory_high_watermark", "0.4");
        } finally {
            publishers.forEach(RabbitMqPublisher::close);
        }
    }

    private RabbitMqPublisher publisher(RabbitMqPublisher.Builder b) {
        RabbitMqPublisher p = b.build();
        publishers.add(p);
        return p;
    }

    private static void raiseMemoryAlarm() throws InterruptedException {
        Rabbit.server().rabbitmqctl("set_vm_memory_high_watermark", "0");
        Awaitility.await("memory alarm raised")
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(
                        () ->
                                Rabbit.server()
                                        .rabbitmqctl("eval", "rabbit_alarm:get_alarms().")
                                        .contains("memory"));
    }

    /** Publishes one message until it is confirmed, for at most 30 s. */
    private static void publishUntilConfirmed(RabbitMqPublisher p, String queue, String id)
            throws InterruptedException {
        Awaitility.await("published after the alarm cleared")
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(30))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(100))
                .until(
                        () ->
                                p.publish(List.of(message(queue, id)), Duration.ofSeconds(5))
                                        .get(0)
                                        .isPublished());
    }

    @Test
    void resourceAlarm_failsTheCallWithinItsDeadline_thenFailsFast_andPublishingResumesOnceCleared()
            throws Exception {
        String queue = Rabbit.declareQueue("alarm");
        RabbitMqPublisher p = publisher(Rabbit.publisherBuilder());
        assertThat(
                        p.publish(List.of(message(queue, "before")), Duration.ofSeconds(10))
                                .get(0)
                                .isPublished())
                .isTrue();
        raiseMemoryAlarm();

        TimedCall first = timedPublish(p, messages(queue, "during", 10), Duration.ofSeconds(2));

        assertAllRetryable(first.outcomes());
        assertThat(first.took())
                .as("returned by the 2 s deadline")
                .isLessThan(Duration.ofMillis(3500));

        TimedCall second =
                timedPublish(p, messages(queue, "still-blocked", 10), Duration.ofSeconds(2));

        assertThat(second.outcomes())
                .allSatisfy(
                        o ->
                                assertThat(o.failure().orElseThrow().getMessage())
                                        .contains("blocked"));
        assertThat(second.took())
                .as("fails fast once the broker said the connection is blocked")
                .isLessThan(Duration.ofMillis(500));

        Rabbit.server().rabbitmqctl("set_vm_memory_high_watermark", "0.4");
        publishUntilConfirmed(p, queue, "after");
        assertThat(Rabbit.drain(queue))
                .extracting(r -> r.getProps().getMessageId())
                .contains("before", "after");
    }

    @Test
    void resourceAlarm_whileALargeBatchIsStillBeingWritten_theCallReturnsByItsDeadline()
            throws Exception {
        String queue = Rabbit.declareQueue("alarm-large");
        raiseMemoryAlarm();
        // A fresh connection: the broker only tells it that it is blocked after its first publish,
        // so the
        // writes really start and stall once the socket buffers fill (40 MiB >> loopback buffers).
        RabbitMqPublisher p =
                publisher(Rabbit.publisherBuilder().publishTimeout(Duration.ofSeconds(2)));
        List<Message> large = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            large.add(
                    Message.builder()
                            .id("large-" + i)
                            .topic(queue)
                            .module("orders")
                            .payload(new byte[1024 * 1024])
                            .build());
        }

        TimedCall call = timedPublish(p, large, Duration.ofSeconds(60));

        assertThat(call.took())
                .as(
                        "publishTimeout (2 s) caps the caller's 60 s, and a stalled write does not hold the call")
                .isLessThan(Duration.ofMillis(3500));
        List<PublishOutcome> outcomes = call.outcomes();
        assertAllRetryable(outcomes);
        assertThat(outcomes.get(outcomes.size() - 1).failure().orElseThrow().getMessage())
                .as("the writer thread was still stuck in a socket write at the deadline")
                .contains("was publishing");

        Rabbit.server().rabbitmqctl("set_vm_memory_high_watermark", "0.4");
        publishUntilConfirmed(p, queue, "after-large");
        long t1 = System.nanoTime();
        p.close();
        Duration closeTook = Duration.ofNanos(System.nanoTime() - t1);
        assertThat(closeTook).isLessThan(Duration.ofSeconds(11));
    }

    /** What a publish call returned and how long it took. */
    private record TimedCall(List<PublishOutcome> outcomes, Duration took) {}

    private static TimedCall timedPublish(
            RabbitMqPublisher p, List<Message> messages, Duration timeout) {
        long start = System.nanoTime();
        List<PublishOutcome> outcomes = p.publish(messages, timeout);
        return new TimedCall(outcomes, Duration.ofNanos(System.nanoTime() - start));
    }

    /** Asserts that no outcome is published and every one is a retryable failure. */
    private static void assertAllRetryable(List<PublishOutcome> outcomes) {
        assertThat(outcomes)
                .allSatisfy(
                        o -> {
                            assertThat(o.isPublished()).isFalse();
                            assertThat(o.isPermanent()).isFalse();
                        });
    }
}
