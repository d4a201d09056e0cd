package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The publisher contract kit: one JUnit 5 test per rule of the {@link Publisher} contract.
 *
 * <p>A publisher implementer extends this class in their test sources and supplies a publisher
 * connected to a real broker, a fresh destination per rule ({@link #newTopic()}), a way to read
 * back what reached the broker ({@link #readBack(String, int, Duration)}), and, where the transport
 * has one, a message the broker rejects for good. The rules check one outcome per message in order,
 * that "published" means the message is readable at the broker with its id, payload, key and the
 * standard headers of {@link OutboxHeaders#of(Message)}, that a permanent rejection is reported as
 * permanent without failing the rest of the batch, that concurrent calls are safe, and that a
 * closed publisher sends nothing. Rules are package-private test methods named {@code required_…} /
 * {@code optional_…}, grouped in {@link Nested} classes; an optional rule the transport cannot
 * support is skipped with the reason its knob gives.
 */
public abstract class PublisherContract {
    private String idPrefix = ""; // set before each rule
    private int idCounter;

    /** Creates the kit; subclasses supply the factories. */
    protected PublisherContract() {}

    /**
     * Returns the publisher under test; may return the same instance every time.
     *
     * @return the publisher
     */
    protected abstract Publisher publisher();

    /**
     * Creates a fresh, empty destination that exists at the broker and returns the topic that the
     * publisher maps to it.
     *
     * @return a topic name unique to the calling test
     */
    protected abstract String newTopic();

    /**
     * Reads back what reached the broker for a topic, waiting until {@code expected} messages
     * arrived or the timeout passed.
     *
     * @param topic the topic from {@link #newTopic()}
     * @param expected how many messages to wait for
     * @param timeout how long to wait at most
     * @return the messages read, in the order the broker delivered them
     */
    protected abstract List<Received> readBack(String topic, int expected, Duration timeout);

    /**
     * Returns a message the broker (or the publisher) must reject permanently, such as one over the
     * size limit, for the given topic; empty (with {@link #permanentFailureUnsupported()}) when the
     * transport has none.
     *
     * @param topic the topic from {@link #newTopic()}
     * @return the message, or empty
     */
    protected abstract Optional<Message> permanentlyRejectedMessage(String topic);

    /**
     * Explains why {@link #permanentlyRejectedMessage(String)} is empty; the rule is skipped with
     * it.
     *
     * @return the reason
     */
    protected String permanentFailureUnsupported() {
        return "the implementer supplied no permanently rejected message";
    }

    /**
     * Capability knob: return a reason when the destination {@link #newTopic()} creates does not
     * keep the order of messages sharing a key (an SQS standard queue, for example); the rule
     * {@code optional_messagesSharingAKeyArriveInOrder} is then skipped with it.
     *
     * @return empty when messages sharing a key arrive in publish order, else why not
     */
    protected Optional<String> keyOrderUnsupported() {
        return Optional.empty();
    }

    /**
     * Capability knob: a new publisher configured like {@link #publisher()}, which the kit closes.
     * The default is empty, and the rule {@code optional_publishAfterCloseSendsNothing} is then
     * skipped, naming this method.
     *
     * @return a fresh publisher the kit may close, or empty
     */
    protected Optional<Publisher> closablePublisher() {
        return Optional.empty();
    }

    /**
     * How long each {@link Publisher#publish} call of the kit may take. The default is 30 seconds.
     *
     * @return a positive timeout
     */
    protected Duration publishTimeout() {
        return Duration.ofSeconds(30);
    }

    /**
     * How long the kit waits for messages to be readable at the broker. The default is 30 seconds.
     *
     * @return a positive timeout
     */
    protected Duration readBackTimeout() {
        return Duration.ofSeconds(30);
    }

    /**
     * A message as read back from the broker.
     *
     * @param id the message id the broker carried (a header, property or attribute)
     * @param payload the body bytes
     * @param key the key the broker carried, if the transport has one
     * @param headers the headers (or message attributes) the broker carried, as text; empty when
     *     the implementer does not read them, which skips the rule {@code
     *     optional_standardHeadersArriveWithTheMessage}
     */
    // byte[] stays for source compatibility with existing kits; the kit compares payloads by
    // content (assertThat(byte[])), never Received by equals
    @SuppressWarnings("ArrayRecordComponent")
    public record Received(
            String id, byte[] payload, Optional<String> key, Map<String, String> headers) {
        /**
         * Copies the headers, keeping their order.
         *
         * @param id the message id
         * @param payload the body bytes
         * @param key the key, if any
         * @param headers the headers the broker carried
         */
        public Received {
            headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        }

        /**
         * A message read back without its headers.
         *
         * @param id the message id
         * @param payload the body bytes
         * @param key the key, if any
         */
        public Received(String id, byte[] payload, Optional<String> key) {
            this(id, payload, key, Map.of());
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Kit helpers
    // ------------------------------------------------------------------------------------------------

    private Message.Builder message(String topic) {
        String id = idPrefix + ++idCounter;
        return Message.builder()
                .id(id)
                .topic(topic)
                .module("tck")
                .contentType("application/json")
                .payload("{\"id\":\"" + id + "\",\"text\":\"grüße ✓\"}")
                .header("tck-rule", "publisher");
    }

    private List<Message> messages(String topic, int count) {
        List<Message> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(message(topic).key(i % 3 == 0 ? null : "key-" + (i % 3)).build());
        }
        return out;
    }

    private List<PublishOutcome> publish(List<Message> messages) {
        List<PublishOutcome> outcomes = publisher().publish(messages, publishTimeout());
        assertThat(outcomes)
                .as(
                        "publish of %d messages must return exactly one outcome per message, but your "
                                + "publisher returned %s",
                        messages.size(), outcomes)
                .isNotNull()
                .hasSize(messages.size());
        return outcomes;
    }

    private static void assertAllPublished(List<Message> messages, List<PublishOutcome> outcomes) {
        for (int i = 0; i < messages.size(); i++) {
            assertThat(outcomes.get(i).isPublished())
                    .as(
                            "message %d '%s' must be reported published (the broker "
                                    + "accepts it), but your publisher reported %s",
                            i, messages.get(i).id(), outcomes.get(i))
                    .isTrue();
        }
    }

    /**
     * Reads back and checks that exactly {@code sent} arrived, each with its id, payload and key.
     */
    private List<Received> assertArrived(String topic, List<Message> sent) {
        List<Received> got = readBack(topic, sent.size(), readBackTimeout());
        Map<String, Message> byId = new LinkedHashMap<>();
        sent.forEach(m -> byId.put(m.id(), m));
        Set<String> arrived =
                got.stream().map(Received::id).collect(Collectors.toCollection(LinkedHashSet::new));
        Set<String> missing = new LinkedHashSet<>(byId.keySet());
        missing.removeAll(arrived);
        assertThat(missing)
                .as(
                        "your publisher reported %d message(s) published, but %d never became readable at "
                                + "the broker under their id within %s (published must mean the broker has taken durable "
                                + "responsibility, and the id must travel with the message): missing %s; the broker holds %s",
                        sent.size(), missing.size(), readBackTimeout(), missing, arrived)
                .isEmpty();
        Set<String> unknown = new LinkedHashSet<>(arrived);
        unknown.removeAll(byId.keySet());
        assertThat(unknown)
                .as(
                        "the broker holds messages whose id was never published: %s (the message id must "
                                + "be carried unchanged)",
                        unknown)
                .isEmpty();
        for (Received r : got) {
            Message m = Objects.requireNonNull(byId.get(r.id())); // no unknown ids: see above
            List<String> diffs = new ArrayList<>();
            Describe.payload(diffs, "payload", m.payload(), r.payload());
            assertThat(diffs)
                    .as(
                            "message '%s' must reach the broker with its payload unchanged, but: %s",
                            m.id(), diffs)
                    .isEmpty();
            if (m.key().isPresent() && r.key().isPresent()) {
                assertThat(r.key())
                        .as("message '%s' must reach the broker with its key", m.id())
                        .isEqualTo(m.key());
            }
        }
        return got;
    }

    /** Base of every rule group: starts fresh ids before each rule. */
    abstract class Rules {
        @BeforeEach
        void freshIds() {
            idPrefix = "tck-" + UUID.randomUUID().toString().substring(0, 8) + "-";
            idCounter = 0;
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Outcomes
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Outcomes")
    class Outcomes extends Rules {
        @Test
        @DisplayName(
                "publish returns one outcome per message, and a message the broker accepts is reported published")
        void required_reportsOneOutcomePerMessage() {
            String topic = newTopic();
            List<Message> sent = messages(topic, 5);
            assertAllPublished(sent, publish(sent));
        }

        @Test
        @DisplayName(
                "a permanently rejected message is reported permanent, in its place, and the rest of the batch is published")
        void optional_permanentRejectionIsReportedAsPermanent() {
            String topic = newTopic();
            Optional<Message> rejected = permanentlyRejectedMessage(topic);
            Assumptions.assumeTrue(
                    rejected.isPresent(), () -> "skipped: " + permanentFailureUnsupported());
            Message before = message(topic).build();
            Message after = message(topic).key("after").build();
            List<PublishOutcome> outcomes = publish(List.of(before, rejected.get(), after));
            PublishOutcome bad = outcomes.get(1);
            assertThat(bad.isPublished())
                    .as(
                            "the permanently rejected message '%s' (index 1 of 3) must be "
                                    + "reported failed, but your publisher reported it published",
                            rejected.get().id())
                    .isFalse();
            assertThat(bad.isPermanent())
                    .as(
                            "the rejection of '%s' must be permanent (a PermanentFailureException "
                                    + "in the cause chain), so the relay dead-letters it instead of retrying forever, but your "
                                    + "publisher reported %s",
                            rejected.get().id(), bad)
                    .isTrue();
            assertThat(outcomes.get(0).isPublished() && outcomes.get(2).isPublished())
                    .as(
                            "the other messages of "
                                    + "the batch (index 0 and 2) must still be published, but your publisher reported %s",
                            outcomes)
                    .isTrue();
            assertArrived(topic, List.of(before, after));
        }
    }

    // ------------------------------------------------------------------------------------------------
    // At the broker
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("At the broker")
    class AtTheBroker extends Rules {
        @Test
        @DisplayName(
                "a message reported published is readable at the broker with its id, payload and key")
        void required_publishedMessageIsReadableAtTheBroker() {
            String topic = newTopic();
            Message m = message(topic).key("order-42").build();
            assertAllPublished(List.of(m), publish(List.of(m)));
            assertArrived(topic, List.of(m));
        }

        @Test
        @DisplayName("every message of a batch arrives at the broker with its own id")
        void required_aBatchArrivesWithEveryId() {
            String topic = newTopic();
            List<Message> sent = messages(topic, 20);
            assertAllPublished(sent, publish(sent));
            assertArrived(topic, sent);
        }

        @Test
        @DisplayName("messages sharing a key arrive in the order they were published")
        void optional_messagesSharingAKeyArriveInOrder() {
            Optional<String> reason = keyOrderUnsupported();
            Assumptions.assumeTrue(
                    reason.isEmpty(),
                    () -> "skipped: keyOrderUnsupported() says " + reason.orElse("nothing"));
            String topic = newTopic();
            List<Message> sent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sent.add(message(topic).key("same-key").build());
            }
            assertAllPublished(sent, publish(sent));
            List<String> order =
                    assertArrived(topic, sent).stream()
                            .map(Received::id)
                            .distinct()
                            .collect(Collectors.toList());
            assertThat(order)
                    .as(
                            "messages sharing a key must arrive in publish order %s, but the broker "
                                    + "delivered %s",
                            Describe.idsOf(sent), order)
                    .containsExactlyElementsOf(Describe.idsOf(sent));
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Headers and close
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Headers and close")
    class HeadersAndClose extends Rules {
        @Test
        @DisplayName(
                "a published message reaches the broker with the standard headers of OutboxHeaders.of")
        void optional_standardHeadersArriveWithTheMessage() {
            String topic = newTopic();
            Message m = message(topic).key("order-42").build();
            assertAllPublished(List.of(m), publish(List.of(m)));
            Received r = assertArrived(topic, List.of(m)).get(0);
            Assumptions.assumeFalse(
                    r.headers().isEmpty(),
                    "skipped: readBack() returned no headers (Received's three-argument"
                            + " constructor); pass the headers the broker carried to check them");
            Map<String, String> expected = OutboxHeaders.of(m);
            Map<String, String> carried = new LinkedHashMap<>(r.headers());
            carried.keySet().retainAll(expected.keySet());
            assertThat(carried)
                    .as(
                            "message '%s' must reach the broker with the standard headers %s"
                                    + " (OutboxHeaders.of, the same on every transport), but the broker"
                                    + " carried %s",
                            m.id(), expected, r.headers())
                    .isEqualTo(expected);
        }

        @Test
        @DisplayName(
                "after close, publish fails every message as retryable and sends nothing to the broker")
        void optional_publishAfterCloseSendsNothing() {
            Optional<Publisher> fresh = closablePublisher();
            Assumptions.assumeTrue(
                    fresh.isPresent(),
                    "skipped: closablePublisher() returned empty; return a publisher the kit may close"
                            + " to check this rule");
            String topic = newTopic();
            Publisher closing = fresh.get();
            Message before = message(topic).key("close").build();
            Message after = message(topic).key("close").build();
            Message marker = message(topic).key("close").build();
            List<PublishOutcome> outcomes;
            try {
                assertAllPublished(
                        List.of(before), closing.publish(List.of(before), publishTimeout()));
            } finally {
                closing.close();
            }
            outcomes = closing.publish(List.of(after), publishTimeout());
            assertThat(outcomes)
                    .as(
                            "publish after close must return one outcome per message, but your"
                                    + " publisher returned %s",
                            outcomes)
                    .hasSize(1);
            assertThat(!outcomes.get(0).isPublished() && !outcomes.get(0).isPermanent())
                    .as(
                            "publish after close must fail the message as retryable (another"
                                    + " publisher may take it), but your publisher reported %s",
                            outcomes.get(0))
                    .isTrue();
            // the marker, published after the refused message on the same key, bounds the wait
            assertAllPublished(List.of(marker), publish(List.of(marker)));
            List<String> arrived =
                    readBack(topic, 2, readBackTimeout()).stream().map(Received::id).toList();
            assertThat(arrived)
                    .as(
                            "a closed publisher must send nothing: the broker must hold '%s' and the"
                                    + " marker '%s' published afterwards, not '%s' (refused after close)",
                            before.id(), marker.id(), after.id())
                    .containsExactlyInAnyOrder(before.id(), marker.id());
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Concurrency
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Concurrency")
    class Concurrency extends Rules {
        @Test
        @DisplayName("publish calls from two threads at once all succeed and every message arrives")
        void required_concurrentPublishCallsAllArrive() throws Exception {
            String topic = newTopic();
            List<List<Message>> batches = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                batches.add(messages(topic, 5));
            }
            List<String> problems = Collections.synchronizedList(new ArrayList<>());
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    int first = t;
                    futures.add(
                            pool.submit(
                                    () -> {
                                        go.await();
                                        for (int b = first; b < batches.size(); b += 2) {
                                            List<Message> batch = batches.get(b);
                                            List<PublishOutcome> outcomes =
                                                    publisher().publish(batch, publishTimeout());
                                            for (int i = 0; i < batch.size(); i++) {
                                                if (outcomes == null
                                                        || outcomes.size() != batch.size()) {
                                                    problems.add(
                                                            "batch "
                                                                    + b
                                                                    + " got "
                                                                    + outcomes
                                                                    + " for "
                                                                    + batch.size()
                                                                    + " messages");
                                                    break;
                                                }
                                                if (!outcomes.get(i).isPublished()) {
                                                    problems.add(
                                                            "'"
                                                                    + batch.get(i).id()
                                                                    + "' failed: "
                                                                    + outcomes.get(i));
                                                }
                                            }
                                        }
                                        return null;
                                    }));
                }
                go.countDown();
                for (Future<?> f : futures) {
                    f.get(
                            publishTimeout().toMillis() * batches.size() + 10_000,
                            TimeUnit.MILLISECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(problems)
                    .as(
                            "two threads publishing 3 batches each at once must all succeed (a publisher "
                                    + "is called from several threads), but: %s",
                            problems)
                    .isEmpty();
            assertArrived(
                    topic, batches.stream().flatMap(List::stream).collect(Collectors.toList()));
        }
    }
}
