package io.outbox4j.publisher.sqs;

import static io.outbox4j.publisher.sqs.SqsTestSupport.createQueue;
import static io.outbox4j.publisher.sqs.SqsTestSupport.id;
import static io.outbox4j.publisher.sqs.SqsTestSupport.receive;
import static io.outbox4j.publisher.sqs.SqsTestSupport.requestsTo;
import static io.outbox4j.publisher.sqs.SqsTestSupport.uniqueName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.InvalidMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryAfterException;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.testservices.SqsServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider;
import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;

/**
 * {@link SqsPublisher} against a real SQS-compatible server (ElasticMQ in the JVM unless configured
 * otherwise).
 */
class SqsPublisherTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final Duration READ = Duration.ofSeconds(20);
    private static final MessageLimits LARGE =
            MessageLimits.DEFAULTS.withMaxPayloadBytes(2 * 1024 * 1024);

    private static SqsPublisher publisher() {
        return SqsPublisher.builder().client(SqsTestSupport.client()).build();
    }

    private static Message.Builder message(String topic, String id) {
        return Message.builder()
                .id(id)
                .topic(topic)
                .module("orders")
                .contentType("application/json")
                .payload("{\"n\":\"" + id + "\"}");
    }

    private static List<Message> messages(String topic, int n) {
        return IntStream.range(0, n)
                .mapToObj(i -> message(topic, "m-" + i).build())
                .collect(Collectors.toList());
    }

    private static void assertAllPublished(List<PublishOutcome> outcomes) {
        assertThat(outcomes).allSatisfy(o -> assertThat(o.isPublished()).as(o.toString()).isTrue());
    }

    /** Asserts that no outcome is published and every one is a retryable failure. */
    private static void assertAllRetryable(List<PublishOutcome> outcomes) {
        assertThat(outcomes)
                .allSatisfy(
                        o -> {
                            assertThat(o.isPublished()).as(o.toString()).isFalse();
                            assertThat(o.isPermanent()).as(o.toString()).isFalse();
                        });
    }

    /** As {@link #assertAllRetryable(List)}, every failure saying {@code reason}. */
    private static void assertAllRetryable(List<PublishOutcome> outcomes, String reason) {
        assertAllRetryable(outcomes);
        assertThat(outcomes)
                .allSatisfy(
                        o -> assertThat(o.failure().orElseThrow()).hasMessageContaining(reason));
    }

    @Nested
    @DisplayName("what reaches the queue")
    class Content {
        @Test
        @DisplayName(
                "id, topic, module, content type, occurredAt, key and 20 user headers round-trip as attributes")
        void attributes_roundTrip() {
            String topic = uniqueName("attrs", false);
            String url = createQueue(topic);
            Map<String, String> headers = new LinkedHashMap<>();
            for (int i = 0; i < 20; i++) {
                headers.put("h" + i, "v" + i);
            }
            headers.put("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
            headers.put(
                    "quotes \"and\" \\slashes",
                    "line\nbreak\ttab \u0001 ctl \uFFFF nonchar \uD800 lone é 😀");
            headers.put("empty", "");
            Instant occurredAt = Instant.parse("2025-03-04T05:06:07.123456Z");
            Message m =
                    message(topic, "order-1/created")
                            .key("order-1")
                            .headers(headers)
                            .contentType("Application/JSON; Charset=UTF-8")
                            .occurredAt(occurredAt)
                            .build();

            assertAllPublished(publisher().publish(List.of(m), TIMEOUT));

            var received = receive(url, 1, READ);
            assertThat(received).hasSize(1);
            var r = received.get(0);
            assertThat(r.messageAttributes()).hasSizeLessThanOrEqualTo(10);
            assertThat(id(r)).isEqualTo("order-1/created");
            assertThat(SqsTestSupport.attribute(r, OutboxHeaders.TOPIC)).isEqualTo(topic);
            assertThat(SqsTestSupport.attribute(r, OutboxHeaders.MODULE)).isEqualTo("orders");
            assertThat(SqsTestSupport.attribute(r, OutboxHeaders.CONTENT_TYPE))
                    .isEqualTo("application/json; charset=utf-8");
            assertThat(Instant.parse(SqsTestSupport.attribute(r, OutboxHeaders.OCCURRED_AT)))
                    .isEqualTo(occurredAt);
            assertThat(SqsTestSupport.key(r)).contains("order-1");
            assertThat(SqsTestSupport.headers(r)).containsExactlyEntriesOf(headers);
            assertThat(r.body()).isEqualTo(m.payloadAsString());
            assertThat(r.messageAttributes()).doesNotContainKey(OutboxHeaders.BODY_ENCODING);
        }

        @Test
        @DisplayName(
                "payloads that are not SQS text are sent as base64, marked, and decode to the same bytes")
        void binaryPayload_base64RoundTrip() {
            String topic = uniqueName("binary", false);
            String url = createQueue(topic);
            byte[] random = new byte[4096];
            new Random(42).nextBytes(random);
            Map<String, byte[]> payloads = new LinkedHashMap<>();
            payloads.put("random", random);
            payloads.put("nul", "a\u0000b".getBytes(StandardCharsets.UTF_8));
            payloads.put("noncharacter", "x\uFFFFy".getBytes(StandardCharsets.UTF_8));
            payloads.put("latin1", "caf\u00e9".getBytes(StandardCharsets.ISO_8859_1));
            payloads.put("empty", new byte[0]);
            payloads.put("text", "tab\tcr\rlf\n é 😀 \uE000".getBytes(StandardCharsets.UTF_8));
            List<Message> batch = new ArrayList<>();
            payloads.forEach(
                    (name, bytes) ->
                            batch.add(
                                    message(topic, name)
                                            .contentType("application/octet-stream")
                                            .payload(bytes)
                                            .build()));

            assertAllPublished(publisher().publish(batch, TIMEOUT));

            var received = receive(url, payloads.size(), READ);
            assertThat(received).hasSize(payloads.size());
            for (var r : received) {
                assertThat(SqsTestSupport.payload(r)).as(id(r)).isEqualTo(payloads.get(id(r)));
                String encoding = SqsTestSupport.attribute(r, OutboxHeaders.BODY_ENCODING);
                String expected =
                        id(r).equals("text")
                                ? null
                                : id(r).equals("empty")
                                        ? SqsPublisher.ENCODING_EMPTY
                                        : SqsPublisher.ENCODING_BASE64;
                assertThat(encoding).as(id(r)).isEqualTo(expected);
            }
        }

        @Test
        @DisplayName(
                "an id that is not a valid batch entry id still publishes, with its exact id as attribute")
        void oddMessageIds_arePublishedWithExactId() {
            String topic = uniqueName("ids", false);
            String url = createQueue(topic);
            List<Message> batch =
                    List.of(
                            message(topic, "a".repeat(255)).build(),
                            message(topic, "a".repeat(254) + "b")
                                    .build(), // same 80-char prefix as the first
                            message(topic, "ünïcødé id with spaces").build(),
                            message(topic, "urn:uuid:0f8fad5b-d9cb-469f-a165-70867728950e")
                                    .build());

            assertAllPublished(publisher().publish(batch, TIMEOUT));

            assertThat(receive(url, 4, READ))
                    .extracting(SqsTestSupport::id)
                    .containsExactlyInAnyOrderElementsOf(
                            batch.stream().map(Message::id).collect(Collectors.toList()));
        }
    }

    @Nested
    @DisplayName("batching")
    class Batching {
        @Test
        @DisplayName("25 messages go out as 3 SendMessageBatch requests of 10, 10 and 5")
        void twentyFiveMessages_threeRequests() {
            String topic = uniqueName("split", false);
            String url = createQueue(topic);

            assertAllPublished(publisher().publish(messages(topic, 25), TIMEOUT));

            assertThat(requestsTo(url)).containsExactly(10, 10, 5);
            assertThat(receive(url, 25, READ)).hasSize(25);
        }

        @Test
        @DisplayName("large messages are split by request size: 5 of 100 KB go out as 2 + 2 + 1")
        void largeMessages_splitBySize() {
            String topic = uniqueName("bysize", false);
            String url = createQueue(topic);
            String big = "x".repeat(100 * 1024);
            List<Message> batch =
                    IntStream.range(0, 5)
                            .mapToObj(i -> message(topic, "big-" + i).payload(big).build())
                            .collect(Collectors.toList());

            assertAllPublished(publisher().publish(batch, TIMEOUT));

            assertThat(requestsTo(url)).containsExactly(2, 2, 1);
            assertThat(receive(url, 5, READ)).allSatisfy(r -> assertThat(r.body()).isEqualTo(big));
        }

        @Test
        @DisplayName(
                "the async client publishes the same way, requests of a standard queue in parallel")
        void asyncClient_publishes() {
            String topic = uniqueName("async", false);
            String url = createQueue(topic);
            SqsPublisher p =
                    SqsPublisher.builder().asyncClient(SqsTestSupport.asyncClient()).build();

            assertAllPublished(p.publish(messages(topic, 35), TIMEOUT));

            assertThat(requestsTo(url)).containsExactlyInAnyOrder(10, 10, 10, 5);
            assertThat(receive(url, 35, READ)).hasSize(35);
        }
    }

    @Nested
    @DisplayName("failures")
    class Failures {
        @Test
        @DisplayName(
                "an oversized message in a batch fails permanently on its own; the 9 others arrive")
        void oversizedEntry_onlyThatEntryFails() {
            String topic = uniqueName("oversize", false);
            String url = createQueue(topic);
            List<Message> batch = new ArrayList<>(messages(topic, 10));
            batch.set(
                    4,
                    Message.builder()
                            .limits(LARGE)
                            .id("too-big")
                            .topic(topic)
                            .module("orders")
                            .payload("y".repeat(SqsPublisher.DEFAULT_MAX_MESSAGE_BYTES))
                            .build());

            List<PublishOutcome> outcomes = publisher().publish(batch, TIMEOUT);

            for (int i = 0; i < outcomes.size(); i++) {
                assertThat(outcomes.get(i).isPublished())
                        .as("outcome %d: %s", i, outcomes.get(i))
                        .isEqualTo(i != 4);
            }
            assertThat(outcomes.get(4).isPermanent()).isTrue();
            assertThat(outcomes.get(4).failure().orElseThrow())
                    .isInstanceOf(InvalidMessageException.class)
                    .hasMessageContaining("too-big")
                    .hasMessageContaining("over the maxMessageBytes limit of 262144");
            assertThat(receive(url, 9, READ))
                    .extracting(SqsTestSupport::id)
                    .doesNotContain("too-big")
                    .hasSize(9);
        }

        @Test
        @DisplayName(
                "a message the server rejects for size (its limit below the publisher's) fails alone, "
                        + "the rest of its batch arrives")
        void serverRejectedEntry_isolatedFromItsBatch() {
            Assumptions.assumeTrue(
                    SqsServer.shared().isElasticMq(),
                    "needs a server whose size limit is 256 KiB (ElasticMQ); Amazon SQS takes up to 1 MiB");
            String topic = uniqueName("isolate", false);
            String url = createQueue(topic);
            SqsPublisher lenient =
                    SqsPublisher.builder()
                            .client(SqsTestSupport.client())
                            .maxMessageBytes(SqsPublisher.MAX_MESSAGE_BYTES)
                            .build();
            List<Message> batch = new ArrayList<>(messages(topic, 5));
            batch.set(
                    2,
                    Message.builder()
                            .limits(LARGE)
                            .id("server-too-big")
                            .topic(topic)
                            .module("orders")
                            .payload("z".repeat(300 * 1024))
                            .build());

            List<PublishOutcome> outcomes = lenient.publish(batch, TIMEOUT);

            assertThat(outcomes.get(2).isPermanent()).as(outcomes.get(2).toString()).isTrue();
            assertThat(outcomes.get(2).failure().orElseThrow())
                    .hasMessageContaining("SQS rejected");
            assertThat(List.of(0, 1, 3, 4))
                    .allSatisfy(i -> assertThat(outcomes.get(i).isPublished()).isTrue());
            assertThat(requestsTo(url)).containsExactly(5, 1, 1, 1, 1, 1);
            assertThat(receive(url, 4, READ)).hasSize(4);
        }

        @Test
        @DisplayName(
                "a missing queue fails its messages as retryable, naming the queue; once created, they publish")
        void missingQueue_clearRetryableFailure_thenPublishesOnceCreated() {
            String topic = uniqueName("missing", false);
            String other = uniqueName("present", false);
            String otherUrl = createQueue(other);
            SqsPublisher p = publisher();
            List<Message> batch =
                    List.of(
                            message(topic, "a").build(),
                            message(other, "b").build(),
                            message(topic, "c").build());

            List<PublishOutcome> outcomes = p.publish(batch, TIMEOUT);

            assertThat(outcomes.get(1).isPublished()).isTrue();
            for (int i : new int[] {0, 2}) {
                assertThat(outcomes.get(i).isPublished()).isFalse();
                assertThat(outcomes.get(i).isPermanent()).isFalse();
                assertThat(outcomes.get(i).failure().orElseThrow())
                        .isInstanceOf(RetryableFailureException.class)
                        .hasMessageContaining("SQS queue '" + topic + "' does not exist")
                        .hasCauseInstanceOf(QueueDoesNotExistException.class);
            }
            assertThat(receive(otherUrl, 1, READ))
                    .extracting(SqsTestSupport::id)
                    .containsExactly("b");

            String url = createQueue(topic);
            assertAllPublished(p.publish(List.of(message(topic, "a").build()), TIMEOUT));
            assertThat(receive(url, 1, READ)).extracting(SqsTestSupport::id).containsExactly("a");
        }

        @Test
        @DisplayName(
                "a queueMapper URL of a queue that does not exist fails retryably, naming the URL")
        void mappedUrlOfMissingQueue_failsRetryably() {
            String existing = createQueue(uniqueName("base", false));
            String missing =
                    existing.substring(0, existing.lastIndexOf('/') + 1)
                            + uniqueName("nope", false);
            SqsPublisher p =
                    SqsPublisher.builder()
                            .client(SqsTestSupport.client())
                            .queueMapper(m -> missing)
                            .build();

            List<PublishOutcome> outcomes = p.publish(messages("any", 3), TIMEOUT);

            assertAllRetryable(outcomes, missing);
        }

        @Test
        @DisplayName(
                "a topic that is no valid queue name fails permanently, telling to map it; the rest is published")
        void topicNotAQueueName_failsPermanentlyWithAdvice() {
            String queue = uniqueName("valid", false);
            String url = createQueue(queue);
            List<PublishOutcome> outcomes =
                    publisher()
                            .publish(
                                    List.of(
                                            message("orders.created", "a").build(),
                                            message(queue, "b").build()),
                                    TIMEOUT);

            assertThat(outcomes.get(0).isPermanent())
                    .as("the same topic maps to the same invalid name on every retry")
                    .isTrue();
            assertThat(outcomes.get(0).failure().orElseThrow())
                    .hasMessageContaining("'orders.created'")
                    .hasMessageContaining("not a valid SQS queue name")
                    .hasMessageContaining("queueNameMapper");
            assertThat(outcomes.get(1).isPublished()).as(outcomes.get(1).toString()).isTrue();
            assertThat(receive(url, 1, READ)).extracting(SqsTestSupport::id).containsExactly("b");
        }

        @Test
        @DisplayName(
                "a mapper that throws or gives no URL fails that message permanently, unless it asks for a retry")
        void mapperThrowingOrGivingNothing_failsThatMessagePermanently() {
            String url = createQueue(uniqueName("mapped", false));
            SqsPublisher p =
                    SqsPublisher.builder()
                            .client(SqsTestSupport.client())
                            .queueMapper(
                                    m ->
                                            switch (m.id()) {
                                                case "boom" ->
                                                        throw new IllegalStateException(
                                                                "no route for boom");
                                                case "later" ->
                                                        throw new RetryAfterException(
                                                                "routing table loading",
                                                                Duration.ofSeconds(7),
                                                                null);
                                                case "nothing" -> null;
                                                default -> url;
                                            })
                            .build();
            SqsPublisher byName =
                    SqsPublisher.builder()
                            .client(SqsTestSupport.client())
                            .queueNameMapper(
                                    m -> {
                                        throw new IllegalArgumentException("no name for " + m.id());
                                    })
                            .build();

            List<PublishOutcome> outcomes =
                    p.publish(
                            List.of(
                                    message("t", "boom").build(),
                                    message("t", "later").build(),
                                    message("t", "nothing").build(),
                                    message("t", "fine").build()),
                            TIMEOUT);
            PublishOutcome named =
                    byName.publish(List.of(message("t", "named").build()), TIMEOUT).get(0);

            assertThat(outcomes.get(0).isPermanent()).as(outcomes.get(0).toString()).isTrue();
            assertThat(outcomes.get(0).failure().orElseThrow())
                    .isInstanceOf(PermanentFailureException.class)
                    .hasMessageContaining("queueMapper threw for message 'boom'")
                    .hasRootCauseMessage("no route for boom");
            assertThat(outcomes.get(1).isPermanent()).isFalse();
            assertThat(outcomes.get(1).retryAfter()).contains(Duration.ofSeconds(7));
            assertThat(outcomes.get(2).isPermanent()).as(outcomes.get(2).toString()).isTrue();
            assertThat(outcomes.get(2).failure().orElseThrow())
                    .hasMessageContaining("queueMapper returned null for message 'nothing'");
            assertThat(outcomes.get(3).isPublished()).as(outcomes.get(3).toString()).isTrue();
            assertThat(named.isPermanent()).as(named.toString()).isTrue();
            assertThat(named.failure().orElseThrow())
                    .hasMessageContaining("queueNameMapper threw for message 'named'");
            assertThat(receive(url, 1, READ))
                    .extracting(SqsTestSupport::id)
                    .containsExactly("fine");
        }

        @Test
        @DisplayName("queueNameMapper maps a topic to another queue name")
        void queueNameMapper_mapsTopic() {
            String queue = uniqueName("orders-created", false);
            String url = createQueue(queue);
            SqsPublisher p =
                    SqsPublisher.builder()
                            .client(SqsTestSupport.client())
                            .queueNameMapper(m -> m.topic().replace('.', '-'))
                            .build();

            assertAllPublished(
                    p.publish(
                            List.of(
                                    message(queue.replace("orders-created", "orders.created"), "a")
                                            .build()),
                            TIMEOUT));

            assertThat(receive(url, 1, READ)).extracting(SqsTestSupport::id).containsExactly("a");
        }

        @Test
        @DisplayName(
                "a publish call on an interrupted thread sends nothing and fails every message as retryable")
        void interruptedCall_sendsNothing() {
            String topic = uniqueName("interrupted", false);
            String url = createQueue(topic);
            SqsPublisher p = publisher();
            assertAllPublished(
                    p.publish(messages(topic, 1), TIMEOUT)); // the queue URL is now cached
            int before = requestsTo(url).size();

            List<PublishOutcome> outcomes;
            Thread.currentThread().interrupt();
            try {
                outcomes = p.publish(messages(topic, 15), TIMEOUT);
            } finally {
                Thread.interrupted();
            }

            assertThat(outcomes).hasSize(15);
            assertAllRetryable(outcomes, "interrupted");
            assertThat(requestsTo(url)).hasSize(before);
        }

        @Test
        @DisplayName(
                "an endpoint that accepts connections but never answers fails every message within the timeout")
        void silentEndpoint_failsWithinTimeout() throws IOException {
            try (SilentServer silent = new SilentServer();
                    SqsClient client = silent.clientOf(SqsClient.builder()).build()) {
                SqsPublisher p =
                        SqsPublisher.builder()
                                .client(client)
                                .queueMapper(m -> silent.queueUrl("q"))
                                .build();

                long start = System.nanoTime();
                List<PublishOutcome> outcomes =
                        p.publish(messages("q", 25), Duration.ofMillis(800));
                Duration took = Duration.ofNanos(System.nanoTime() - start);

                assertThat(took).isLessThan(Duration.ofSeconds(3));
                assertThat(outcomes).hasSize(25);
                assertAllRetryable(outcomes);
            }
        }

        @Test
        @DisplayName("interrupting a call stops it: the FIFO queue's next request is never sent")
        @SuppressWarnings("ThreadJoinLoop") // it joins in a loop, swallowing only its own interrupt
        void interruptedFifoCall_sendsNoMoreRequests() throws Exception {
            try (SilentServer silent = new SilentServer();
                    SqsAsyncClient client = silent.clientOf(SqsAsyncClient.builder()).build()) {
                SqsPublisher p =
                        SqsPublisher.builder()
                                .asyncClient(client)
                                .queueMapper(m -> silent.queueUrl("q.fifo"))
                                .build();
                Thread caller = Thread.currentThread();
                Thread interrupter =
                        new Thread(
                                () -> {
                                    silent.awaitConnections(1, Duration.ofSeconds(10));
                                    caller.interrupt();
                                });
                interrupter.start();

                List<PublishOutcome> outcomes;
                try {
                    // a key per message: no group is stopped by the first request's failure
                    outcomes =
                            p.publish(
                                    messages("q", 25).stream()
                                            .map(m -> m.toBuilder().key(m.id()).build())
                                            .collect(Collectors.toList()),
                                    Duration.ofSeconds(20));
                } finally {
                    // publish() keeps the interrupt it received set; join() would throw on it
                    boolean joined = false;
                    while (!joined) {
                        try {
                            interrupter.join();
                            joined = true;
                        } catch (InterruptedException expected) {
                            // the interrupt this test sent to the caller
                        }
                    }
                    Thread.interrupted();
                }

                assertThat(outcomes)
                        .hasSize(25)
                        .allSatisfy(o -> assertThat(o.isPublished()).isFalse());
                // the cancelled first request must not be followed by the second: give it a second
                // to show up
                assertThat(silent.awaitConnections(2, Duration.ofSeconds(1)))
                        .as("connections")
                        .isEqualTo(1);
            }
        }
    }

    @Nested
    @DisplayName("close")
    class Close {
        @Test
        @DisplayName(
                "after close, publish fails every message as retryable and sends no request; the client stays open")
        void publishAfterClose_failsRetryably_andSendsNothing() {
            String topic = uniqueName("closed", false);
            String url = createQueue(topic);
            SqsPublisher p = publisher();
            assertAllPublished(p.publish(messages(topic, 1), TIMEOUT));
            int before = requestsTo(url).size();

            p.close();
            p.close(); // idempotent
            List<PublishOutcome> outcomes = p.publish(messages(topic, 5), TIMEOUT);

            assertThat(outcomes).hasSize(5);
            assertAllRetryable(outcomes, "the SqsPublisher is closed");
            assertThat(outcomes)
                    .allSatisfy(
                            o ->
                                    assertThat(o.failure().orElseThrow())
                                            .isInstanceOf(RetryableFailureException.class));
            assertThat(requestsTo(url)).as("requests sent to the queue").hasSize(before);
            assertThat(p.toString()).endsWith(", closed]");
            assertAllPublished(publisher().publish(messages(topic, 1), TIMEOUT));
            assertThat(receive(url, 2, READ)).extracting(SqsTestSupport::id).hasSize(2);
        }

        @Test
        @DisplayName(
                "close during a call lets the request in flight finish and sends none of the call's later requests")
        void closeDuringACall_sendsNoFurtherRequest() {
            String topic = uniqueName("closing", true);
            String url = createQueue(topic);
            java.util.concurrent.atomic.AtomicReference<SqsPublisher> publisher =
                    new java.util.concurrent.atomic.AtomicReference<>();
            ExecutionInterceptor closeOnFirstSend =
                    new ExecutionInterceptor() {
                        @Override
                        public void beforeTransmission(
                                Context.BeforeTransmission context,
                                ExecutionAttributes attributes) {
                            if (context.request() instanceof SendMessageBatchRequest) {
                                publisher.get().close();
                            }
                        }
                    };
            try (SqsClient client =
                    SqsTestSupport.newClient(
                            new SqsTestSupport.RequestRecorder(), closeOnFirstSend)) {
                publisher.set(SqsPublisher.builder().client(client).build());
                // a group per message: FIFO requests go one after the other, none stops another
                List<Message> batch =
                        messages(topic, 25).stream()
                                .map(m -> m.toBuilder().key(m.id()).build())
                                .collect(Collectors.toList());

                List<PublishOutcome> outcomes = publisher.get().publish(batch, TIMEOUT);

                assertThat(outcomes.subList(0, 10))
                        .as("the first request, in flight when close came")
                        .allSatisfy(o -> assertThat(o.isPublished()).as(o.toString()).isTrue());
                assertAllRetryable(outcomes.subList(10, 25), "the SqsPublisher was closed");
                assertThat(requestsTo(url)).as("requests sent to the queue").containsExactly(10);
            }
        }
    }

    @Nested
    @DisplayName("FIFO queues")
    class Fifo {
        @ParameterizedTest(name = "{0} client")
        @ValueSource(strings = {"sync", "async"})
        @DisplayName(
                "messages of each group arrive in publish order; group = key, deduplication id = message id")
        void groupOrder_preserved(String kind) {
            String topic = uniqueName("fifo", true);
            String url = createQueue(topic);
            List<Message> all = new ArrayList<>();
            for (int i = 0; i < 90; i++) {
                String key = "customer-" + (i % 3);
                all.add(message(topic, key + "-" + i).key(key).build());
            }
            SqsPublisher p =
                    kind.equals("sync")
                            ? publisher()
                            : SqsPublisher.builder()
                                    .asyncClient(SqsTestSupport.asyncClient())
                                    .build();

            for (int from = 0; from < all.size(); from += 45) {
                assertAllPublished(p.publish(all.subList(from, from + 45), TIMEOUT));
            }

            var received = receive(url, 90, READ);
            assertThat(received).hasSize(90);
            Map<String, List<String>> byGroup =
                    received.stream()
                            .collect(
                                    Collectors.groupingBy(
                                            SqsTestSupport::groupId,
                                            LinkedHashMap::new,
                                            Collectors.mapping(
                                                    SqsTestSupport::id, Collectors.toList())));
            assertThat(byGroup).containsOnlyKeys("customer-0", "customer-1", "customer-2");
            byGroup.forEach(
                    (group, ids) ->
                            assertThat(ids)
                                    .as(group)
                                    .containsExactlyElementsOf(
                                            all.stream()
                                                    .filter(
                                                            m ->
                                                                    m.key()
                                                                            .orElseThrow()
                                                                            .equals(group))
                                                    .map(Message::id)
                                                    .collect(Collectors.toList())));
            assertThat(received)
                    .allSatisfy(
                            r ->
                                    assertThat(
                                                    r.attributes()
                                                            .get(
                                                                    MessageSystemAttributeName
                                                                            .MESSAGE_DEDUPLICATION_ID))
                                            .isEqualTo(id(r)));
        }

        @Test
        @DisplayName(
                "a failed request stops its groups: their later messages are not sent, other groups go on")
        void failedRequest_stopsItsGroupsOnly() {
            String topic = uniqueName("fifostop", true);
            String url = createQueue(topic);
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 30; i++) { // requests: [A B A B ...] [A B A B ...] [A C A C ...]
                String key = i % 2 == 0 ? "A" : i < 20 ? "B" : "C";
                batch.add(message(topic, key + "-" + i).key(key).build());
            }
            java.util.function.IntPredicate published = i -> i < 10 || (i >= 20 && i % 2 == 1);
            // Fault injection in the client pipeline: the request holding batch position 10 never
            // leaves the client.
            ExecutionInterceptor cutCable =
                    new ExecutionInterceptor() {
                        @Override
                        public void beforeTransmission(
                                Context.BeforeTransmission context,
                                ExecutionAttributes attributes) {
                            if (context.request() instanceof SendMessageBatchRequest
                                    && ((SendMessageBatchRequest) context.request())
                                            .entries().stream()
                                                    .anyMatch(e -> e.id().startsWith("10-"))) {
                                throw new IllegalStateException("injected: connection reset");
                            }
                        }
                    };
            try (SqsClient faulty = SqsTestSupport.newClient(cutCable)) {

                List<PublishOutcome> outcomes =
                        SqsPublisher.builder().client(faulty).build().publish(batch, TIMEOUT);

                for (int i = 0; i < 30; i++) {
                    PublishOutcome o = outcomes.get(i);
                    assertThat(o.isPublished()).as("%d: %s", i, o).isEqualTo(published.test(i));
                    assertThat(o.isPermanent()).isFalse();
                }
                assertThat(outcomes.get(10).failure().orElseThrow())
                        .hasMessageContaining("injected");
                assertThat(outcomes.get(13).failure().orElseThrow())
                        .hasMessageContaining("injected");
                assertThat(outcomes.get(22).failure().orElseThrow())
                        .hasMessageContaining("an earlier message of its FIFO group failed");
                var received = receive(url, 15, READ);
                assertThat(received)
                        .extracting(SqsTestSupport::id)
                        .containsExactlyInAnyOrderElementsOf(
                                IntStream.range(0, 30)
                                        .filter(published)
                                        .mapToObj(i -> batch.get(i).id())
                                        .collect(Collectors.toList()));
            }
        }

        @Test
        @DisplayName(
                "publishing the same message id twice reaches a FIFO queue once (deduplication id = id)")
        void redelivery_isDeduplicated() {
            String topic = uniqueName("dedup", true);
            String url = createQueue(topic);
            Message m = message(topic, "once").key("k").build();

            Message after = message(topic, "after").key("k").build();

            assertAllPublished(publisher().publish(List.of(m), TIMEOUT));
            assertAllPublished(publisher().publish(List.of(m), TIMEOUT));
            // a later message of the same group: FIFO hands out a second copy of "once" before it,
            // so the first two messages read show whether one was kept (no waiting out a timeout)
            assertAllPublished(publisher().publish(List.of(after), TIMEOUT));

            assertThat(receive(url, 2, READ))
                    .extracting(SqsTestSupport::id)
                    .containsExactly("once", "after");
        }

        @Test
        @DisplayName(
                "a keyless message needs fifoDefaultGroupId: without it a retryable failure says so")
        void keylessMessage_usesDefaultGroupOrFailsClearly() {
            String topic = uniqueName("nokey", true);
            String url = createQueue(topic);
            Message m = message(topic, "no-key").build();

            PublishOutcome without = publisher().publish(List.of(m), TIMEOUT).get(0);
            assertThat(without.isPermanent()).isFalse();
            assertThat(without.failure().orElseThrow()).hasMessageContaining("fifoDefaultGroupId");

            SqsPublisher withDefault =
                    SqsPublisher.builder()
                            .client(SqsTestSupport.client())
                            .fifoDefaultGroupId("outbox-default")
                            .build();
            assertAllPublished(withDefault.publish(List.of(m), TIMEOUT));
            var received = receive(url, 1, READ);
            assertThat(SqsTestSupport.groupId(received.get(0))).isEqualTo("outbox-default");
        }

        @Test
        @DisplayName(
                "keys and ids SQS would refuse as FIFO ids (too long, non-ASCII) are hashed, order kept")
        void longKey_hashedGroup_orderKept() {
            String topic = uniqueName("longkey", true);
            String url = createQueue(topic);
            String key = "k".repeat(200);
            List<Message> batch =
                    IntStream.range(0, 15)
                            .mapToObj(
                                    i ->
                                            message(topic, "ïd-" + i + "-" + "x".repeat(150))
                                                    .key(key)
                                                    .build())
                            .collect(Collectors.toList());

            assertAllPublished(publisher().publish(batch, TIMEOUT));

            var received = receive(url, 15, READ);
            assertThat(received)
                    .extracting(SqsTestSupport::id)
                    .containsExactlyElementsOf(
                            batch.stream().map(Message::id).collect(Collectors.toList()));
            assertThat(received).extracting(SqsTestSupport::key).containsOnly(Optional.of(key));
            assertThat(SqsTestSupport.groupId(received.get(0))).startsWith("sha256-").hasSize(71);
        }

        @Test
        @DisplayName(
                "after an oversized (permanent) message, later messages of its group are still sent, in order")
        void permanentFailure_doesNotStopItsGroup() {
            String topic = uniqueName("fifoperm", true);
            String url = createQueue(topic);
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                batch.add(message(topic, "g-" + i).key("g").build());
            }
            batch.set(
                    3,
                    Message.builder()
                            .limits(LARGE)
                            .id("g-3")
                            .key("g")
                            .topic(topic)
                            .module("orders")
                            .payload("y".repeat(300 * 1024))
                            .build());

            List<PublishOutcome> outcomes = publisher().publish(batch, TIMEOUT);

            assertThat(outcomes.get(3).isPermanent()).isTrue();
            assertThat(receive(url, 11, READ))
                    .extracting(SqsTestSupport::id)
                    .containsExactlyElementsOf(
                            batch.stream()
                                    .map(Message::id)
                                    .filter(i -> !i.equals("g-3"))
                                    .collect(Collectors.toList()));
        }
    }

    @Nested
    @DisplayName("configuration")
    class Configuration {
        @Test
        @DisplayName("bad settings fail at the builder with a message naming the setting")
        void badSettings_rejectedClearly() {
            assertThatThrownBy(() -> SqsPublisher.builder().build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("client or asyncClient must be set");
            assertThatThrownBy(
                            () ->
                                    SqsPublisher.builder()
                                            .client(SqsTestSupport.client())
                                            .asyncClient(SqsTestSupport.asyncClient())
                                            .build())
                    .hasMessageContaining("not both");
            assertThatThrownBy(() -> SqsPublisher.builder().maxMessageBytes(100))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("maxMessageBytes must be between 1024 and 1048576, but was 100");
            assertThatThrownBy(() -> SqsPublisher.builder().fifoDefaultGroupId("has space"))
                    .hasMessageContaining("fifoDefaultGroupId")
                    .hasMessageContaining("'has space'");
            assertThatThrownBy(() -> SqsPublisher.builder().apiCallTimeout(Duration.ZERO))
                    .hasMessage("apiCallTimeout must be positive, but was PT0S");
            assertThatThrownBy(
                            () ->
                                    SqsPublisher.builder()
                                            .client(SqsTestSupport.client())
                                            .apiCallTimeout(Duration.ofSeconds(1))
                                            .apiCallAttemptTimeout(Duration.ofSeconds(2))
                                            .build())
                    .hasMessageContaining(
                            "apiCallAttemptTimeout (PT2S) must not exceed apiCallTimeout (PT1S)");
            assertThatThrownBy(
                            () ->
                                    SqsPublisher.builder()
                                            .client(SqsTestSupport.client())
                                            .queueMapper(m -> "u")
                                            .queueNameMapper(Message::topic)
                                            .build())
                    .hasMessageContaining("not both");
            assertThatThrownBy(() -> publisher().publish(List.of(), Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("timeout");
            assertThat(publisher().publish(List.of(), TIMEOUT)).isEmpty();
        }

        @Test
        @DisplayName(
                "maxMessageBytes is counted as SQS does: body plus attribute names, types and values")
        void maxMessageBytes_countsAttributes() {
            String topic = uniqueName("limit", false);
            createQueue(topic);
            SqsPublisher small =
                    SqsPublisher.builder()
                            .client(SqsTestSupport.client())
                            .maxMessageBytes(2048)
                            .build();
            Message fits = message(topic, "fits").payload("a".repeat(1500)).build();
            Message attrsTip =
                    message(topic, "attrs")
                            .payload("a".repeat(1500))
                            .header("pad", "p".repeat(600))
                            .build();

            List<PublishOutcome> outcomes = small.publish(List.of(fits, attrsTip), TIMEOUT);

            assertThat(outcomes.get(0).isPublished()).isTrue();
            assertThat(outcomes.get(1).isPermanent()).isTrue();
            assertThat(outcomes.get(1).failure().orElseThrow())
                    .hasMessageContaining("body 1500 bytes");
            assertThat(small.toString()).contains("maxMessageBytes=2048");
        }
    }

    /**
     * A loopback TCP server that accepts connections and never answers: an SQS endpoint that hangs.
     */
    static final class SilentServer implements AutoCloseable {
        private final ServerSocket socket;
        private final List<Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();

        SilentServer() throws IOException {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor =
                    new Thread(
                            () -> {
                                try {
                                    while (true) {
                                        accepted.add(socket.accept()); // hold the connection, never
                                        // answer
                                    }
                                } catch (IOException closed) {
                                    // closed by the test
                                }
                            },
                            "silent-sqs");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        java.net.URI uri() {
            return java.net.URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }

        String queueUrl(String name) {
            return uri() + "/000000000000/" + name;
        }

        /** Points a client at this server, anonymously. */
        <B extends AwsClientBuilder<B, ?>> B clientOf(B builder) {
            return builder.endpointOverride(uri())
                    .region(Region.US_EAST_1)
                    .credentialsProvider(AnonymousCredentialsProvider.create());
        }

        /**
         * Waits until at least {@code n} connections were accepted or the time passed; returns the
         * count.
         */
        int awaitConnections(int n, Duration atMost) {
            long end = System.nanoTime() + atMost.toNanos();
            while (accepted.size() < n && System.nanoTime() < end) {
                Thread.onSpinWait();
            }
            return accepted.size();
        }

        @Override
        public void close() throws IOException {
            socket.close();
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
