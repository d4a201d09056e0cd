package io.outbox4j.publisher.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.ServerSupport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A broker that is down: the publisher returns within its timeout, reports retryable failures and
 * never reports a message published that the broker did not acknowledge. Uses a private embedded
 * broker it can stop.
 */
class BrokerDownTest {
    private static KafkaServer kafka;

    @BeforeAll
    static void startBroker() {
        kafka = KafkaTopics.stoppableBroker();
    }

    @AfterEach
    void restartBroker() {
        kafka.start();
    }

    private static List<Message> batch(String prefix, String topic, int n) {
        return IntStream.range(0, n)
                .mapToObj(
                        i ->
                                Message.builder()
                                        .id(prefix + "-" + i)
                                        .topic(topic)
                                        .module("m")
                                        .key("k" + i % 3)
                                        .payload("p" + i)
                                        .build())
                .toList();
    }

    private static void assertAllRetryable(List<PublishOutcome> outcomes) {
        assertThat(outcomes)
                .isNotEmpty()
                .allSatisfy(
                        o -> {
                            assertThat(o.isPublished())
                                    .as("nothing is published while the broker is down")
                                    .isFalse();
                            assertThat(o.isPermanent())
                                    .as("a broker outage is retryable: " + o)
                                    .isFalse();
                        });
    }

    @Test
    void publish_toABrokerThatNeverAnswered_failsRetryablyWithinTheTimeout() {
        // no metadata at all: a plain KafkaProducer.send would block for max.block.ms (here 30 s)
        String nowhere = "127.0.0.1:" + ServerSupport.freePort();
        try (KafkaPublisher publisher =
                KafkaPublisher.builder()
                        .bootstrapServers(nowhere)
                        .closeTimeout(Duration.ZERO)
                        .build()) {
            long t0 = System.nanoTime();
            List<PublishOutcome> outcomes =
                    publisher.publish(batch("never", "orders", 5), Duration.ofSeconds(2));
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

            assertThat(outcomes).hasSize(5);
            assertAllRetryable(outcomes);
            assertThat(tookMs).as("publish returns within its 2 s timeout").isLessThan(3_000);
            assertThat(outcomes.get(0).failure().orElseThrow())
                    .hasMessageContaining("not handed to the Kafka producer")
                    .hasMessageContaining("timeout of 2s")
                    .hasMessageContaining("no broker reachable: connection refused by " + nowhere)
                    .hasMessageNotContaining("will be retried");
            assertThat(Thread.currentThread().isInterrupted())
                    .as("the interrupt that ended the blocked send at the deadline is cleared")
                    .isFalse();
        }
    }

    @Test
    void publish_interruptedByItsCaller_whileBlockedForMetadata_endsAtOnce_andKeepsTheInterrupt()
            throws Exception {
        String nowhere = "127.0.0.1:" + ServerSupport.freePort();
        String topic = "interrupted-" + System.nanoTime();
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try (KafkaPublisher publisher =
                KafkaPublisher.builder()
                        .bootstrapServers(nowhere)
                        .producerProperty(
                                ProducerConfig.INTERCEPTOR_CLASSES_CONFIG,
                                SendCounter.class.getName())
                        .closeTimeout(Duration.ZERO)
                        .build()) {
            CountDownLatch handedOver = SendCounter.expect(topic, 1);
            CompletableFuture<Thread> callerThread = new CompletableFuture<>();
            CompletableFuture<Boolean> interruptKept = new CompletableFuture<>();
            CompletableFuture<List<PublishOutcome>> call =
                    CompletableFuture.supplyAsync(
                            () -> {
                                callerThread.complete(Thread.currentThread());
                                List<PublishOutcome> outcomes =
                                        publisher.publish(
                                                batch("cut", topic, 3), Duration.ofSeconds(30));
                                interruptKept.complete(Thread.interrupted());
                                return outcomes;
                            },
                            caller);
            assertThat(handedOver.await(10, TimeUnit.SECONDS))
                    .as("the first record reached the producer, which now waits for metadata")
                    .isTrue();

            long t0 = System.nanoTime();
            callerThread.get(10, TimeUnit.SECONDS).interrupt();
            List<PublishOutcome> outcomes = call.get(10, TimeUnit.SECONDS);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

            assertThat(outcomes).hasSize(3);
            assertAllRetryable(outcomes);
            assertThat(outcomes.get(0).failure().orElseThrow())
                    .hasMessageContaining("the call was interrupted");
            assertThat(tookMs).as("the call ends at the interrupt, not its 30 s").isLessThan(5_000);
            assertThat(interruptKept.get()).as("the caller's interrupt status is kept").isTrue();
        } finally {
            caller.shutdownNow();
        }
    }

    @Test
    void publish_whileTheBrokerIsStopped_failsRetryably_andPublishesAgainAfterRestart() {
        String topic = KafkaTopics.create(kafka, "down", 3, Map.of());
        try (KafkaPublisher publisher =
                KafkaPublisher.builder()
                        .bootstrapServers(kafka.bootstrapServers())
                        .deliveryTimeout(Duration.ofSeconds(5))
                        .closeTimeout(Duration.ofSeconds(1))
                        .build()) {
            assertThat(publisher.publish(batch("warm", topic, 3), Duration.ofSeconds(20)))
                    .allMatch(PublishOutcome::isPublished);

            kafka.stop();
            long t0 = System.nanoTime();
            List<PublishOutcome> whileDown =
                    publisher.publish(batch("down", topic, 20), Duration.ofSeconds(2));
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            kafka.start();

            assertAllRetryable(whileDown);
            assertThat(tookMs).as("publish returns within its 2 s timeout").isLessThan(3_000);
            assertThat(whileDown.get(0).failure().orElseThrow())
                    .as("the failure names the transport's cause, as the producer's log does")
                    .hasMessageContaining(
                            "no broker reachable: connection refused by "
                                    + kafka.bootstrapServers())
                    .hasMessageNotContaining("will be retried");
            List<PublishOutcome> afterRestart =
                    publisher.publish(batch("after", topic, 20), Duration.ofSeconds(30));
            assertThat(afterRestart)
                    .allSatisfy(o -> assertThat(o.isPublished()).as(o.toString()).isTrue());
        }
        List<String> ids =
                KafkaTopics.readAll(kafka, topic, 23, Duration.ofSeconds(20)).stream()
                        .map(r -> KafkaTopics.header(r, OutboxHeaders.ID))
                        .toList();
        assertThat(ids)
                .contains("warm-0", "warm-1", "warm-2")
                .containsAll(IntStream.range(0, 20).mapToObj(i -> "after-" + i).toList());
    }

    /**
     * The case the test must tell apart from the trivial one (a call made after close, which fails
     * before reaching the producer): here the call is inside the producer when close begins. With
     * the broker gone the producer holds the first record either in its buffer or in a wait for
     * metadata (after it re-bootstraps); close ends both, and the call returns by the close
     * timeout, not by its own 30 s.
     */
    @Test
    void close_whileACallWaitsInTheProducerForAStoppedBroker_endsItRetryably_byTheCloseTimeout()
            throws Exception {
        String topic = KafkaTopics.create(kafka, "closing", 1, Map.of());
        KafkaPublisher publisher =
                KafkaPublisher.builder()
                        .bootstrapServers(kafka.bootstrapServers())
                        .producerProperty(
                                ProducerConfig.INTERCEPTOR_CLASSES_CONFIG,
                                SendCounter.class.getName())
                        .closeTimeout(Duration.ofMillis(500))
                        .build();
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try {
            assertThat(publisher.publish(batch("warm", topic, 1), Duration.ofSeconds(20)))
                    .allMatch(PublishOutcome::isPublished);
            kafka.stop();
            CountDownLatch handedOver = SendCounter.expect(topic, 1);
            CompletableFuture<List<PublishOutcome>> inFlight =
                    CompletableFuture.supplyAsync(
                            () ->
                                    publisher.publish(
                                            batch("inflight", topic, 10), Duration.ofSeconds(30)),
                            caller);
            assertThat(handedOver.await(10, TimeUnit.SECONDS))
                    .as("the publisher hands the first record to the producer")
                    .isTrue();
            assertThat(inFlight).as("the call waits for a broker that cannot answer").isNotDone();

            long t0 = System.nanoTime();
            publisher.close();
            List<PublishOutcome> outcomes = inFlight.get(10, TimeUnit.SECONDS);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

            assertAllRetryable(outcomes);
            assertThat(outcomes).hasSize(10);
            // By timing the producer fails it either from its buffer or its metadata wait
            // (KafkaException) or from send() seeing the producer closed (IllegalStateException).
            assertThat(outcomes.get(0).failure().orElseThrow())
                    .as("the record inside the producer is failed by the producer's close")
                    .isInstanceOf(RetryableFailureException.class)
                    .satisfiesAnyOf(
                            e -> assertThat(e).hasCauseInstanceOf(KafkaException.class),
                            e ->
                                    assertThat(e.getCause())
                                            .isInstanceOf(IllegalStateException.class)
                                            .hasMessageContaining("closed"));
            assertThat(tookMs)
                    .as("close ends the call by its 500 ms timeout, not the call's 30 s")
                    .isLessThan(5_000);

            List<PublishOutcome> afterClose =
                    publisher.publish(batch("late", topic, 1), Duration.ofSeconds(30));
            assertAllRetryable(afterClose);
            assertThat(afterClose.get(0).failure().orElseThrow())
                    .as("the trivial case, a call after close, never reaches the producer")
                    .hasMessageContaining("the KafkaPublisher is closed")
                    .hasNoCause();
        } finally {
            publisher.close();
            caller.shutdownNow();
        }
    }
}
