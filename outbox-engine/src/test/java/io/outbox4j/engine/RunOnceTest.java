package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.Observer;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.RecordingStore.Call;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * One batch: claim → publish → record → observe, and what happens when the store or the publisher
 * misbehaves.
 */
class RunOnceTest extends RelayRig {
    private final IllegalStateException down = new IllegalStateException("database down");

    /** The rig's reference store, recorded, every {@code call} on it failing with {@link #down}. */
    private RecordingStore failingOn(Call call) {
        return new RecordingStore(memory).failing(call, down);
    }

    private Relay.Builder relay(Publisher publisher) {
        return relayOn(store, publisher).owner("relay-1").backoff(attempt -> Duration.ofMinutes(1));
    }

    @Test
    void runOnce_claimsPublishesAndCompletes_andObservesEachDelivery() {
        memory.enqueueCommitted(Fixtures.messages("m", 5));
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay = relay(publisher).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(5, 5, 5, 0, 0, 0));
        }
        assertThat(publisher.publishedIdsInOrder())
                .containsExactlyInAnyOrder("m0", "m1", "m2", "m3", "m4");
        assertThat(memory.size()).isZero();
        assertThat(observer.deliveries)
                .extracting(Observation::messageId)
                .containsExactly("m0", "m1", "m2", "m3", "m4");
        assertThat(observer.deliveries)
                .hasSize(5)
                .allSatisfy(
                        o -> {
                            assertThat(o.outcome()).isEqualTo(Outcome.COMPLETED);
                            assertThat(o.messageId()).startsWith("m");
                            assertThat(o.key()).isEmpty();
                            assertThat(o.enqueuedAt()).isEqualTo(clock.instant());
                            assertThat(o.topic()).isEqualTo("orders.created");
                            assertThat(o.module()).isEqualTo("orders");
                            assertThat(o.attempt()).isEqualTo(1);
                            assertThat(o.duration().isNegative()).isFalse();
                            assertThat(o.error()).isEmpty();
                            assertThat(o.publisherThrewError()).isFalse();
                        });
    }

    @Test
    void runOnce_onAnEmptyOutbox_publishesNothing() {
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay = relay(publisher).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(0, 0, 0, 0, 0, 0));
        }
        assertThat(publisher.calls).isEmpty();
        assertThat(store.completions).isEmpty();
        assertThat(observer.deliveries).isEmpty();
    }

    @Test
    void completions_areWrittenInOneCallPerBatch_failuresOneByOne() {
        memory.enqueueCommitted(Fixtures.messages("m", 10));
        Set<String> failing = Set.of("m3", "m7");
        Publisher publisher = Fixtures.ScriptedPublisher.failing(failing::contains);
        try (Relay relay = relay(publisher).batchSize(10).workers(4).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(10, 8, 8, 2, 0, 0));
        }
        assertThat(store.completions).hasSize(1);
        assertThat(store.completions.get(0).receipts()).hasSize(8);
        assertThat(store.releases).hasSize(2);
        assertThat(memory.size()).isEqualTo(2);
    }

    @Test
    void anExceptionFromThePublisher_failsEveryMessageOfThatCall() {
        memory.enqueueCommitted(Fixtures.messages("m", 3));
        IllegalStateException reset = new IllegalStateException("connection reset");
        Publisher publisher =
                (messages, timeout) -> {
                    throw reset;
                };
        try (Relay relay = relay(publisher).workers(1).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(3, 0, 0, 3, 0, 0));
        }
        assertThat(observer.deliveries)
                .hasSize(3)
                .allSatisfy(
                        o -> {
                            assertThat(o.outcome()).isEqualTo(Outcome.RELEASED);
                            assertThat(o.error()).containsSame(reset);
                            assertThat(o.publisherThrewError()).isFalse();
                        });
        assertThat(memory.lastError("m0"))
                .hasValue("java.lang.IllegalStateException: connection reset");
    }

    @Test
    void aPermanentExceptionFromThePublisher_deadLettersTheCall() {
        memory.enqueueCommitted(Fixtures.messages("m", 2));
        Publisher publisher =
                (messages, timeout) -> {
                    throw new PermanentFailureException("topic does not exist");
                };
        try (Relay relay = relay(publisher).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(2, 0, 0, 0, 2, 0));
        }
        assertThat(memory.deadLetterReason("m1"))
                .hasValueSatisfying(r -> assertThat(r).contains("topic does not exist"));
    }

    @Test
    void aPublisherAnsweringWithTheWrongNumberOfOutcomes_failsTheCall() {
        memory.enqueueCommitted(Fixtures.messages("m", 3));
        Publisher publisher = (messages, timeout) -> List.of(PublishOutcome.published());
        try (Relay relay = relay(publisher).workers(1).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(3, 0, 0, 3, 0, 0));
        }
        assertThat(observer.deliveries)
                .allSatisfy(
                        o ->
                                assertThat(o.error())
                                        .hasValueSatisfying(
                                                e ->
                                                        assertThat(e)
                                                                .hasMessage(
                                                                        "publisher returned 1 outcomes for 3 messages")));
    }

    /**
     * The lease ran out during publishing and another relay claimed the messages: our writes are
     * stale.
     */
    @Test
    void staleReceipts_areObservedAsStale_andNeverRetried() {
        memory.enqueueCommitted(List.of(Fixtures.message("ok"), Fixtures.message("bad")));
        Relay[] self = new Relay[1];
        Publisher publisher =
                (messages, timeout) -> {
                    clock.advance(self[0].lease().plusSeconds(1));
                    assertThat(
                                    memory.claim(
                                            new ClaimRequest(
                                                    "relay-2",
                                                    clock.instant(),
                                                    Duration.ofMinutes(5),
                                                    10)))
                            .hasSize(2);
                    return messages.stream()
                            .map(
                                    m ->
                                            m.id().equals("ok")
                                                    ? PublishOutcome.published()
                                                    : PublishOutcome.failed(
                                                            new IllegalStateException("nack")))
                            .toList();
                };
        try (Relay relay = relay(publisher).workers(1).build()) {
            self[0] = relay;
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(2, 1, 0, 0, 0, 0));
        }
        assertThat(observer.outcomes()).containsExactly(Outcome.STALE, Outcome.STALE);
        assertThat(observer.storeErrors).isEmpty();
        assertThat(store.completions).as("one completion, not retried").hasSize(1);
        assertThat(store.releases).as("one release, not retried").hasSize(1);
        assertThat(memory.attempts("ok")).as("still leased by relay-2").hasValue(2);
        assertThat(memory.attempts("bad")).hasValue(2);
    }

    @Test
    void aStaleDeadLetter_isObservedAsStale() {
        memory.enqueueCommitted(List.of(Fixtures.message("m1")));
        Relay[] self = new Relay[1];
        Publisher publisher =
                (messages, timeout) -> {
                    clock.advance(self[0].lease().plusSeconds(1));
                    memory.claim(
                            new ClaimRequest(
                                    "relay-2", clock.instant(), Duration.ofMinutes(5), 10));
                    return List.of(
                            PublishOutcome.failed(new PermanentFailureException("bad record")));
                };
        try (Relay relay = relay(publisher).build()) {
            self[0] = relay;
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(1, 0, 0, 0, 0, 0));
        }
        assertThat(observer.outcomes()).containsExactly(Outcome.STALE);
        assertThat(store.deadLetters).hasSize(1);
        assertThat(memory.deadLetterReason("m1")).isEmpty();
    }

    @Test
    void aStoreFailureOnCompletion_isReported_andTheDeliveriesObservedAsPublishedNotRecorded() {
        RecordingStore failing = failingOn(Call.COMPLETE);
        memory.enqueueCommitted(Fixtures.messages("m", 2));
        try (Relay relay = relayOn(failing, Fixtures.ScriptedPublisher.accepting()).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(2, 2, 0, 0, 0, 0));
            assertThat(observer.storeErrors).containsExactly(down);
            assertThat(observer.outcomes())
                    .containsExactly(
                            Outcome.PUBLISHED_NOT_RECORDED, Outcome.PUBLISHED_NOT_RECORDED);
            clock.advance(relay.lease());
        }
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .as("redelivered after the lease")
                .hasSize(2);
    }

    @Test
    void aStoreFailureOnRelease_isReported_andObservedAsNotRecorded() {
        RecordingStore failing = failingOn(Call.RELEASE);
        memory.enqueueCommitted(Fixtures.messages("m", 1));
        Publisher publisher =
                new Fixtures.ScriptedPublisher(
                        m -> PublishOutcome.failed(new IllegalStateException("nack")));
        try (Relay relay = relayOn(failing, publisher).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(1, 0, 0, 0, 0, 0));
        }
        assertThat(observer.storeErrors).containsExactly(down);
        assertThat(observer.outcomes()).containsExactly(Outcome.NOT_RECORDED);
        assertThat(memory.attempts("m0"))
                .as("the try counts; the lease ends by itself")
                .hasValue(1);
    }

    @Test
    void aFailedClaim_isThrownAndReported() {
        RecordingStore failing = failingOn(Call.CLAIM);
        try (Relay relay =
                Relay.builder(failing, Fixtures.ScriptedPublisher.accepting())
                        .observer(observer)
                        .build()) {
            assertThatThrownBy(relay::runOnce).isSameAs(down);
        }
        assertThat(observer.storeErrors).containsExactly(down);
    }

    @Test
    void anObserverThatThrows_isIgnored() {
        memory.enqueueCommitted(Fixtures.messages("m", 3));
        Observer throwing =
                new Observer() {
                    @Override
                    public void onDelivery(Observation observation) {
                        throw new IllegalStateException("observer bug");
                    }

                    @Override
                    public void onStoreError(Throwable error) {
                        throw new IllegalStateException("observer bug");
                    }
                };
        RecordingStore failingCompletion =
                new RecordingStore(memory) {
                    @Override
                    public Set<String> complete(Completion completion) {
                        super.complete(completion);
                        throw new IllegalStateException("store hiccup after the write");
                    }
                };
        try (Relay relay =
                Relay.builder(failingCompletion, Fixtures.ScriptedPublisher.accepting())
                        .clock(clock)
                        .observer(throwing)
                        .build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(3, 3, 0, 0, 0, 0));
        }
        assertThat(memory.size()).isZero();
    }

    @Test
    void observations_neverCarryThePayloadTheHeadersOrTheReceipt() {
        Message secret =
                Message.builder()
                        .id("m1")
                        .topic("t")
                        .module("mod")
                        .payload("secret-payload")
                        .header("x-auth", "secret-header")
                        .build();
        memory.enqueueCommitted(List.of(secret));
        Publisher publisher =
                new Fixtures.ScriptedPublisher(
                        m -> PublishOutcome.failed(new IllegalStateException("nack")));
        try (Relay relay = relay(publisher).build()) {
            relay.runOnce();
        }
        String receipt = store.releases.get(0).receipt();
        assertThat(observer.deliveries)
                .singleElement()
                .satisfies(
                        o ->
                                assertThat(o.toString())
                                        .contains("mod", "nack")
                                        .doesNotContain(
                                                "secret-payload",
                                                "secret-header",
                                                "x-auth",
                                                receipt));
    }
}
