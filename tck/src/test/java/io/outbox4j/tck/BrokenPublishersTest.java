package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The publisher kit against the fake broker (every rule passes) and against publishers with one
 * defect each (the rules about that defect fail with a readable message). The broken publishers are
 * static nested classes, so surefire never runs them directly.
 */
class BrokenPublishersTest {

    /** Reports the last message of every batch published, but never hands it to the broker. */
    static class DropsTheLastMessage extends InMemoryBrokerPublisherContractTest {
        @Override
        InMemoryBrokerPublisher newPublisher() {
            return new InMemoryBrokerPublisher() {
                @Override
                public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
                    List<PublishOutcome> out =
                            new ArrayList<>(
                                    super.publish(
                                            messages.subList(0, messages.size() - 1), timeout));
                    out.add(PublishOutcome.published());
                    return out;
                }
            };
        }
    }

    /** Maps the broker's "record too large" to a plain, retryable failure. */
    static class RejectionReportedRetryable extends InMemoryBrokerPublisherContractTest {
        @Override
        InMemoryBrokerPublisher newPublisher() {
            return new InMemoryBrokerPublisher() {
                @Override
                public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
                    return super.publish(messages, timeout).stream()
                            .map(
                                    o ->
                                            o.isPermanent()
                                                    ? PublishOutcome.failed(
                                                            new IllegalStateException(
                                                                    o.failure()
                                                                            .orElseThrow()
                                                                            .getMessage()))
                                                    : o)
                            .collect(Collectors.toList());
                }
            };
        }
    }

    /** Sends every message but forgets to carry the message id (the broker assigns its own). */
    static class LosesTheId extends InMemoryBrokerPublisherContractTest {
        @Override
        InMemoryBrokerPublisher newPublisher() {
            return new InMemoryBrokerPublisher() {
                @Override
                void deliver(Message m) {
                    super.deliver(m.toBuilder().id("broker-" + m.id().hashCode()).build());
                }
            };
        }
    }

    /** Carries only the user headers, not the standard ones. */
    static class DropsTheStandardHeaders extends InMemoryBrokerPublisherContractTest {
        @Override
        InMemoryBrokerPublisher newPublisher() {
            return new InMemoryBrokerPublisher() {
                @Override
                Map<String, String> headers(Message m) {
                    return m.headers();
                }
            };
        }
    }

    /** Keeps publishing after close (as SqsPublisher did before 0.2). */
    static class PublishesAfterClose extends InMemoryBrokerPublisherContractTest {
        @Override
        InMemoryBrokerPublisher newPublisher() {
            return new InMemoryBrokerPublisher() {
                @Override
                public void close() {
                    // forgets to stop
                }
            };
        }
    }

    /** The rules that read what was published back from the broker. */
    private static final Set<String> AT_THE_BROKER_RULES =
            Set.of(
                    "required_publishedMessageIsReadableAtTheBroker",
                    "required_aBatchArrivesWithEveryId",
                    "optional_messagesSharingAKeyArriveInOrder",
                    "required_concurrentPublishCallsAllArrive",
                    "optional_permanentRejectionIsReportedAsPermanent",
                    "optional_standardHeadersArriveWithTheMessage",
                    "optional_publishAfterCloseSendsNothing");

    @Test
    @DisplayName("every publisher rule passes on the fake broker and none is skipped")
    void everyRulePassesOnTheFakeBroker() {
        KitReport report = KitReport.run(InMemoryBrokerPublisherContractTest.class);
        assertThat(report.failed()).isEmpty();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.passed().keySet())
                .containsExactlyInAnyOrder(
                        "required_reportsOneOutcomePerMessage",
                                "optional_permanentRejectionIsReportedAsPermanent",
                        "required_publishedMessageIsReadableAtTheBroker",
                                "required_aBatchArrivesWithEveryId",
                        "optional_messagesSharingAKeyArriveInOrder",
                                "required_concurrentPublishCallsAllArrive",
                        "optional_standardHeadersArriveWithTheMessage",
                                "optional_publishAfterCloseSendsNothing");
    }

    @Test
    @DisplayName("a publisher that drops the standard headers fails the header rule")
    void dropsTheStandardHeaders() {
        assertFails(
                DropsTheStandardHeaders.class,
                Set.of("optional_standardHeadersArriveWithTheMessage"),
                "must reach the broker with the standard headers");
    }

    @Test
    @DisplayName("a publisher that keeps publishing after close fails the close rule")
    void publishesAfterClose() {
        assertFails(
                PublishesAfterClose.class,
                Set.of("optional_publishAfterCloseSendsNothing"),
                "publish after close must fail the message as retryable");
    }

    @Test
    @DisplayName(
            "a publisher that reports success for a message it dropped fails every at-the-broker rule")
    void dropsTheLastMessage() {
        assertFails(
                DropsTheLastMessage.class,
                AT_THE_BROKER_RULES,
                "never became readable at the broker under their id",
                // its one-message call after close "publishes" the message it drops
                "publish after close must fail the message as retryable");
    }

    @Test
    @DisplayName(
            "a publisher that reports a permanent rejection as retryable fails the permanent-failure rule")
    void rejectionReportedRetryable() {
        assertFails(
                RejectionReportedRetryable.class,
                Set.of("optional_permanentRejectionIsReportedAsPermanent"),
                "must be permanent (a PermanentFailureException in the cause chain)");
    }

    @Test
    @DisplayName("a publisher that does not carry the message id fails every at-the-broker rule")
    void losesTheId() {
        assertFails(
                LosesTheId.class,
                AT_THE_BROKER_RULES,
                "the id must travel with the message",
                "a closed publisher must send nothing");
    }

    /** Asserts the kit fails exactly {@code rules}, each with a message holding one phrase. */
    private static void assertFails(Class<?> kit, Set<String> rules, String... phrases) {
        KitReport report = KitReport.run(kit);
        Map<String, KitReport.Outcome> failed = report.failed();
        String failures =
                failed.values().stream()
                        .map(o -> "\n  " + o.rule() + ": " + o.message())
                        .collect(Collectors.joining());
        assertThat(failed.keySet())
                .as("%s must fail exactly %s; failures:%s", kit.getSimpleName(), rules, failures)
                .containsExactlyInAnyOrderElementsOf(rules);
        assertThat(failed.values()).allSatisfy(o -> assertThat(o.message()).containsAnyOf(phrases));
        Set<String> others = new TreeSet<>(report.outcomes.keySet());
        others.removeAll(rules);
        assertThat(report.passed().keySet()).containsExactlyInAnyOrderElementsOf(others);
        System.out.println("== " + kit.getSimpleName() + failures);
    }
}
