package io.outbox4j.publisher.rabbitmq;

import static io.outbox4j.publisher.rabbitmq.Rabbit.message;
import static io.outbox4j.publisher.rabbitmq.Rabbit.messages;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import io.outbox4j.api.InvalidMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PublishOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the RabbitMQ publisher does against a real broker, message by message. */
class RabbitMqPublisherTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final List<RabbitMqPublisher> publishers = new ArrayList<>();

    private RabbitMqPublisher publisher(RabbitMqPublisher.Builder builder) {
        RabbitMqPublisher p = builder.build();
        publishers.add(p);
        return p;
    }

    private RabbitMqPublisher publisher() {
        return publisher(Rabbit.publisherBuilder());
    }

    @AfterEach
    void closePublishers() {
        publishers.forEach(RabbitMqPublisher::close);
    }

    private static List<String> ids(List<GetResponse> got) {
        return got.stream().map(r -> r.getProps().getMessageId()).toList();
    }

    /**
     * Takes the queue's messages up to and including the one with id {@code last} (at most {@code
     * max}, within {@link #TIMEOUT}), returning their ids.
     */
    private static List<String> takeThrough(String queue, String last, int max) {
        List<String> got = new ArrayList<>();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!got.contains(last) && got.size() < max && System.nanoTime() < deadline) {
            got.addAll(ids(Rabbit.take(queue, max - got.size(), Duration.ofMillis(100))));
        }
        return got;
    }

    private static String failureText(PublishOutcome o) {
        assertThat(o.isPublished()).as("outcome %s", o).isFalse();
        return String.valueOf(o.failure().orElseThrow().getMessage());
    }

    @Test
    void publishedMessage_carriesIdContentTypeTimestampTopicHeadersAndPayload() {
        String queue = Rabbit.declareQueue("props");
        Instant occurredAt = Instant.parse("2024-05-06T07:08:09.123456Z");
        Message m =
                Message.builder()
                        .id("order-42")
                        .topic(queue)
                        .key("customer-7")
                        .module("orders")
                        .contentType("Application/JSON; Charset=UTF-8")
                        .payload("{\"total\":12.5}")
                        .header("tenant", "acme")
                        .header("trace-id", "abc123")
                        .occurredAt(occurredAt)
                        .build();
        RabbitMqPublisher p = publisher(Rabbit.publisherBuilder().appId("orders-service"));

        List<PublishOutcome> outcomes = p.publish(List.of(m), TIMEOUT);

        assertThat(outcomes).singleElement().satisfies(o -> assertThat(o.isPublished()).isTrue());
        GetResponse got = Rabbit.take(queue, 1, TIMEOUT).get(0);
        AMQP.BasicProperties props = got.getProps();
        assertThat(props.getMessageId()).isEqualTo("order-42");
        assertThat(props.getContentType()).isEqualTo("application/json; charset=utf-8");
        assertThat(props.getDeliveryMode()).as("persistent").isEqualTo(2);
        assertThat(props.getType()).isEqualTo(queue);
        assertThat(props.getAppId()).isEqualTo("orders-service");
        assertThat(props.getTimestamp().toInstant())
                .isEqualTo(Instant.parse("2024-05-06T07:08:09Z"));
        Map<String, String> headers =
                props.getHeaders().entrySet().stream()
                        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().toString()));
        assertThat(headers)
                .containsOnly(
                        Map.entry("tenant", "acme"),
                        Map.entry("trace-id", "abc123"),
                        Map.entry(OutboxHeaders.ID, "order-42"),
                        Map.entry(OutboxHeaders.TOPIC, queue),
                        Map.entry(OutboxHeaders.MODULE, "orders"),
                        Map.entry(OutboxHeaders.CONTENT_TYPE, "application/json; charset=utf-8"),
                        Map.entry(OutboxHeaders.KEY, "customer-7"),
                        Map.entry(OutboxHeaders.OCCURRED_AT, "2024-05-06T07:08:09.123456Z"));
        assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("{\"total\":12.5}");
        assertThat(got.getEnvelope().getExchange()).as("default exchange").isEmpty();
        assertThat(got.getEnvelope().getRoutingKey()).isEqualTo(queue);
    }

    @Test
    void unroutableMessage_failsRetryably_thenIsDeliveredOnceAQueueIsBound() {
        String exchange = Rabbit.declareDirectExchange("orders");
        String routed = Rabbit.declareQueue("routed");
        Rabbit.bind(routed, exchange, "order.created");
        RabbitMqPublisher p = publisher(Rabbit.publisherBuilder().exchange(exchange));
        Message unroutable = message("order.cancelled", "cancel-1");
        Message routable = message("order.created", "create-1");

        List<PublishOutcome> first = p.publish(List.of(unroutable, routable), TIMEOUT);

        assertThat(failureText(first.get(0)))
                .contains("unroutable", "312", "NO_ROUTE", "order.cancelled");
        assertThat(first.get(0).isPermanent()).isFalse();
        assertThat(first.get(1).isPublished())
                .as("the routable message of the same batch")
                .isTrue();
        assertThat(ids(Rabbit.take(routed, 1, TIMEOUT))).containsExactly("create-1");

        String cancelled = Rabbit.declareQueue("cancelled");
        Rabbit.bind(cancelled, exchange, "order.cancelled");
        List<PublishOutcome> retry = p.publish(List.of(unroutable), TIMEOUT);

        assertThat(retry.get(0).isPublished()).isTrue();
        // the witness: a message confirmed after the retry reached the queue behind it
        assertThat(p.publish(List.of(message("order.cancelled", "cancel-2")), TIMEOUT).get(0))
                .matches(PublishOutcome::isPublished, "published");
        assertThat(takeThrough(cancelled, "cancel-2", 3))
                .as("delivered once: the returned copy never reached a queue")
                .containsExactly("cancel-1", "cancel-2");
    }

    @Test
    void queueFullWithRejectPublish_nacksTheOverflow_asRetryableFailures_thatSucceedOnceConsumed() {
        String queue =
                Rabbit.declareQueue(
                        "bounded", Map.of("x-max-length", 2, "x-overflow", "reject-publish"));
        RabbitMqPublisher p = publisher();
        List<Message> batch = messages(queue, "m", 5);

        List<PublishOutcome> outcomes = p.publish(batch, TIMEOUT);

        assertThat(outcomes.subList(0, 2)).allSatisfy(o -> assertThat(o.isPublished()).isTrue());
        assertThat(outcomes.subList(2, 5))
                .allSatisfy(
                        o -> {
                            assertThat(failureText(o)).contains("nacked");
                            assertThat(o.isPermanent()).isFalse();
                        });
        List<String> delivered = new ArrayList<>(ids(Rabbit.take(queue, 2, TIMEOUT)));

        List<PublishOutcome> retried = p.publish(batch.subList(2, 4), TIMEOUT);

        assertThat(retried).allSatisfy(o -> assertThat(o.isPublished()).isTrue());
        delivered.addAll(ids(Rabbit.take(queue, 2, TIMEOUT)));
        assertThat(p.publish(batch.subList(4, 5), TIMEOUT).get(0).isPublished()).isTrue();
        delivered.addAll(ids(Rabbit.take(queue, 1, TIMEOUT)));
        assertThat(delivered).containsExactly("m-0", "m-1", "m-2", "m-3", "m-4");
    }

    @Test
    void
            publishingToAMissingExchange_closesTheChannel_failsItsUnconfirmedMessages_andTheNextBatchWorks() {
        // The protocol: publishing to an exchange that does not exist is a channel error (404); the
        // broker
        // discards everything published after it on that channel.
        String queue = Rabbit.declareQueue("after-404");
        String missing = Rabbit.uniqueName("no-such-exchange");
        RabbitMqPublisher p =
                publisher(
                        Rabbit.publisherBuilder()
                                .destinationMapper(
                                        m ->
                                                m.topic().equals("lost")
                                                        ? new RabbitMqPublisher.Destination(
                                                                missing, "x")
                                                        : new RabbitMqPublisher.Destination(
                                                                "", m.topic())));
        Message before = message(queue, "before");
        Message lost = message("lost", "lost");
        List<Message> after = messages(queue, "after", 20);
        List<Message> batch = new ArrayList<>();
        batch.add(before);
        batch.add(lost);
        batch.addAll(after);

        List<PublishOutcome> outcomes = p.publish(batch, TIMEOUT);

        assertThat(failureText(outcomes.get(1))).contains("404", "NOT_FOUND", missing);
        assertThat(outcomes.get(1).isPermanent()).isFalse();
        assertThat(outcomes.subList(2, outcomes.size()))
                .as("published on the channel after its error")
                .allSatisfy(
                        o -> {
                            assertThat(o.isPublished()).isFalse();
                            assertThat(o.isPermanent()).isFalse();
                        });
        Set<String> reportedPublished = new HashSet<>();
        for (int i = 0; i < batch.size(); i++) {
            if (outcomes.get(i).isPublished()) {
                reportedPublished.add(batch.get(i).id());
            }
        }
        // the witness: a message confirmed after the batch (on a new channel) reached the queue
        assertThat(p.publish(List.of(message(queue, "marker")), TIMEOUT).get(0))
                .matches(PublishOutcome::isPublished, "published");
        List<String> inQueue = takeThrough(queue, "marker", 23);
        assertThat(inQueue).as("the marker arrived").contains("marker");
        assertThat(inQueue)
                .as("nothing after the error reached the queue")
                .doesNotContain("after-0", "after-19");
        assertThat(inQueue)
                .as("every message reported published is in the queue")
                .containsAll(reportedPublished);

        List<PublishOutcome> next = p.publish(batch.subList(1, batch.size()), TIMEOUT);

        assertThat(failureText(next.get(0)))
                .as("known missing: checked, not sent")
                .contains("does not exist", missing);
        assertThat(next.get(0).isPermanent()).isFalse();
        assertThat(next.subList(1, next.size()))
                .as("the rest of the batch, on a new channel, unharmed")
                .allSatisfy(o -> assertThat(o.isPublished()).isTrue());
        assertThat(ids(Rabbit.take(queue, after.size(), TIMEOUT)))
                .containsExactlyElementsOf(after.stream().map(Message::id).toList());

        Rabbit.withChannel(ch -> ch.exchangeDeclare(missing, "direct", false, true, null));
        String lostQueue = Rabbit.declareQueue("found");
        Rabbit.bind(lostQueue, missing, "x");

        assertThat(p.publish(List.of(lost), TIMEOUT).get(0).isPublished())
                .as("once the exchange exists")
                .isTrue();
        assertThat(ids(Rabbit.take(lostQueue, 1, TIMEOUT))).containsExactly("lost");
    }

    @Test
    void connectionClosedByTheBroker_failsWhatWasUnconfirmed_andTheNextCallReconnects()
            throws Exception {
        String queue = Rabbit.declareQueue("reconnect");
        RabbitMqPublisher p =
                publisher(Rabbit.publisherBuilder().connectionName("outbox4j-reconnect-test"));
        assertThat(p.publish(List.of(message(queue, "warm-up")), TIMEOUT).get(0).isPublished())
                .isTrue();

        Rabbit.server().rabbitmqctl("close_all_connections", "--vhost", "/", "closed by a test");

        Set<String> published = new HashSet<>(Set.of("warm-up"));
        AtomicInteger attempt = new AtomicInteger();
        Awaitility.await("published again after the broker closed the connection")
                .dontCatchUncaughtExceptions()
                .atMost(TIMEOUT)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(50))
                .pollInSameThread()
                .until(
                        () -> {
                            String id = "after-close-" + attempt.getAndIncrement();
                            PublishOutcome o =
                                    p.publish(List.of(message(queue, id)), TIMEOUT).get(0);
                            if (o.isPublished()) {
                                published.add(id);
                                return true;
                            }
                            assertThat(o.isPermanent())
                                    .as("a lost connection is retryable: %s", o)
                                    .isFalse();
                            return false;
                        });
        // A message failed while the connection went down may still have reached the queue (at
        // least once);
        // one reported published must be there. A last message confirmed after all of them marks
        // the end of what the queue can hold of them (no waiting out a timeout).
        assertThat(p.publish(List.of(message(queue, "last")), TIMEOUT).get(0).isPublished())
                .isTrue();
        assertThat(takeThrough(queue, "last", attempt.get() + 2)).containsAll(published);
    }

    @Test
    void concurrentCallsFromManyThreads_areAllConfirmedAndDeliveredOnce() throws Exception {
        String queue = Rabbit.declareQueue("concurrent");
        RabbitMqPublisher p = publisher();
        int threads = 8;
        int batches = 25;
        int batchSize = 20;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<PublishOutcome>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(
                        pool.submit(
                                () -> {
                                    List<PublishOutcome> all = new ArrayList<>();
                                    for (int b = 0; b < batches; b++) {
                                        all.addAll(
                                                p.publish(
                                                        messages(
                                                                queue,
                                                                "t" + thread + "-b" + b,
                                                                batchSize),
                                                        TIMEOUT));
                                    }
                                    return all;
                                }));
            }
            for (Future<List<PublishOutcome>> f : futures) {
                assertThat(f.get())
                        .allSatisfy(o -> assertThat(o.isPublished()).as("%s", o).isTrue());
            }
        } finally {
            pool.shutdownNow();
        }
        int total = threads * batches * batchSize;
        // every call was confirmed, so all its copies are in the queue before a last message
        // confirmed after them: read up to it instead of waiting out a timeout for an extra copy
        assertThat(p.publish(List.of(message(queue, "last")), TIMEOUT).get(0).isPublished())
                .isTrue();
        List<String> got = takeThrough(queue, "last", total + 1);
        assertThat(got).as("read up to the last message").endsWith("last");
        assertThat(got.subList(0, got.size() - 1)).hasSize(total).doesNotHaveDuplicates();
    }

    @Test
    void messagesNoRetryCanFix_failPermanently_withoutHarmingTheRestOfTheBatch() {
        String queue = Rabbit.declareQueue("permanent");
        RabbitMqPublisher p =
                publisher(
                        Rabbit.publisherBuilder()
                                .maxBodyBytes(1024)
                                .destinationMapper(
                                        m -> {
                                            if (m.topic().equals("rejected-by-mapper")) {
                                                throw new IllegalArgumentException(
                                                        "no route for tenant x");
                                            }
                                            if (m.topic().equals("mapper-bug")) {
                                                throw new IllegalStateException(
                                                        "lookup table not loaded");
                                            }
                                            if (m.topic().equals("mapper-null")) {
                                                return null;
                                            }
                                            return new RabbitMqPublisher.Destination("", m.topic());
                                        }));
        Message tooBig =
                Message.builder()
                        .id("big")
                        .topic(queue)
                        .module("orders")
                        .payload(new byte[1025])
                        .build();
        Message longId =
                Message.builder()
                        .id("é".repeat(128))
                        .topic(queue)
                        .module("orders")
                        .payload("x")
                        .build();
        Message longHeaderName =
                Message.builder()
                        .id("hdr")
                        .topic(queue)
                        .module("orders")
                        .payload("x")
                        .header("ü".repeat(128), "v")
                        .build();
        List<Message> batch =
                List.of(
                        message(queue, "ok-1"),
                        tooBig,
                        longId,
                        longHeaderName,
                        message("rejected-by-mapper", "mapper-iae"),
                        message("mapper-bug", "mapper-ise"),
                        message("mapper-null", "mapper-null"),
                        message(queue, "ok-2"));

        List<PublishOutcome> o = p.publish(batch, TIMEOUT);

        assertThat(o.get(0).isPublished()).isTrue();
        assertThat(o.get(1).isPermanent()).isTrue();
        assertThat(failureText(o.get(1))).contains("1025", "maxBodyBytes");
        assertThat(o.subList(1, 4))
                .as("the message itself is at fault: too big, an id or header name over 255 bytes")
                .allSatisfy(
                        f ->
                                assertThat(f.failure().orElseThrow())
                                        .isInstanceOf(InvalidMessageException.class));
        assertThat(o.get(2).isPermanent()).isTrue();
        assertThat(failureText(o.get(2))).contains("256 bytes", "255");
        assertThat(o.get(3).isPermanent()).isTrue();
        assertThat(failureText(o.get(3))).contains("header name");
        assertThat(o.get(4).isPermanent()).isTrue();
        assertThat(failureText(o.get(4))).contains("no route for tenant x");
        assertThat(o.get(5).isPermanent())
                .as("whatever the mapper throws, it would throw again for this message")
                .isTrue();
        assertThat(failureText(o.get(5)))
                .contains("destinationMapper threw for message 'mapper-ise'")
                .contains("lookup table not loaded");
        assertThat(o.get(6).isPermanent()).isTrue();
        assertThat(failureText(o.get(6))).contains("returned null");
        assertThat(o.get(7).isPublished()).isTrue();
        assertThat(ids(Rabbit.take(queue, 3, Duration.ofMillis(500))))
                .containsExactly("ok-1", "ok-2");
    }

    @Test
    void changingTheFactoryAfterBuilding_doesNotChangeThePublisher() {
        String queue = Rabbit.declareQueue("factory-copy");
        com.rabbitmq.client.ConnectionFactory f = Rabbit.factory();
        RabbitMqPublisher p = publisher(RabbitMqPublisher.builder().connectionFactory(f));
        f.setPort(io.outbox4j.testservices.ServerSupport.freePort());
        f.setAutomaticRecoveryEnabled(true);

        assertThat(p.publish(List.of(message(queue, "copied")), TIMEOUT).get(0).isPublished())
                .isTrue();
        assertThat(ids(Rabbit.take(queue, 1, TIMEOUT))).containsExactly("copied");
    }

    @Test
    void publishAfterClose_failsEveryMessageRetryably() {
        String queue = Rabbit.declareQueue("closed");
        RabbitMqPublisher p = publisher();
        assertThat(p.publish(List.of(message(queue, "a")), TIMEOUT).get(0).isPublished()).isTrue();

        p.close();
        p.close();
        List<PublishOutcome> o = p.publish(messages(queue, "late", 3), TIMEOUT);

        assertThat(o)
                .hasSize(3)
                .allSatisfy(
                        x -> {
                            assertThat(failureText(x)).contains("closed");
                            assertThat(x.isPermanent()).isFalse();
                        });
    }

    @Test
    void manyBatchesInARow_reuseThePooledChannel_andStayInOrder() {
        String queue = Rabbit.declareQueue("order");
        RabbitMqPublisher p =
                publisher(Rabbit.publisherBuilder().connectionName("outbox4j-sequential-test"));
        List<String> expected = new ArrayList<>();
        for (int b = 0; b < 50; b++) {
            List<Message> batch = messages(queue, "b" + b, 10);
            batch.forEach(m -> expected.add(m.id()));
            assertThat(p.publish(batch, TIMEOUT))
                    .allSatisfy(o -> assertThat(o.isPublished()).isTrue());
        }
        assertThat(ids(Rabbit.take(queue, expected.size(), TIMEOUT)))
                .containsExactlyElementsOf(expected);
        assertThat(Rabbit.server().controllable() ? channelsOf("outbox4j-sequential-test") : 1)
                .as("one call at a time needs one channel")
                .isEqualTo(1);
    }

    /** Counts the channels the broker sees on connections with this client-provided name. */
    static int channelsOf(String connectionName) {
        String out =
                Rabbit.server()
                        .rabbitmqctl(
                                "list_connections", "client_properties", "channels", "--silent");
        return out.lines()
                .filter(l -> l.contains("\"" + connectionName + "\""))
                .mapToInt(l -> Integer.parseInt(l.substring(l.lastIndexOf('\t') + 1).strip()))
                .sum();
    }
}
