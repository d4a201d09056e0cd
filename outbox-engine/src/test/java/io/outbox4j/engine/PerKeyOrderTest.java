package io.outbox4j.engine;

import static io.outbox4j.engine.Fixtures.message;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Per-key order inside one relay: lanes, no same-key overlap, claim order, and holding back behind
 * a failure.
 */
class PerKeyOrderTest extends RelayRig {
    /** {@code n} messages cycling over {@code keys} keys: a0, b0, c0, a1, b1, … */
    private static List<Message> interleaved(int n, String... keys) {
        List<Message> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String key = keys[i % keys.length];
            list.add(Fixtures.message(key + (i / keys.length), key));
        }
        return list;
    }

    @Test
    void sameKeyMessages_goOutInClaimOrder_neverTwiceInOneCall_andHeadsArePipelined() {
        List<Message> messages = interleaved(12, "a", "b", "c");
        memory.enqueueCommitted(messages);
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay =
                Relay.builder(store, publisher).clock(clock).batchSize(12).workers(2).build()) {
            assertThat(relay.runOnce().completed()).isEqualTo(12);
        }
        for (List<String> call : publisher.calls) {
            assertThat(call.stream().map(id -> id.substring(0, 1)).toList())
                    .as("keys of call %s", call)
                    .doesNotHaveDuplicates();
        }
        Map<String, List<String>> perKey =
                publisher.publishedIdsInOrder().stream()
                        .collect(Collectors.groupingBy(id -> id.substring(0, 1)));
        assertThat(perKey.get("a")).containsExactly("a0", "a1", "a2", "a3");
        assertThat(perKey.get("b")).containsExactly("b0", "b1", "b2", "b3");
        assertThat(perKey.get("c")).containsExactly("c0", "c1", "c2", "c3");
        assertThat(publisher.calls)
                .as("one worker hands the heads of two lanes to one call")
                .anySatisfy(call -> assertThat(call).hasSizeGreaterThan(1));
    }

    @Test
    void sameKeyMessages_areNeverInConcurrentCalls_whileWorkersDoRunConcurrently() {
        List<Message> messages = new ArrayList<>(interleaved(30, "a", "b", "c"));
        messages.addAll(Fixtures.messages("nokey", 10));
        memory.enqueueCommitted(messages);
        KeyTrackingPublisher publisher = new KeyTrackingPublisher(3_000_000);
        try (Relay relay =
                Relay.builder(store, publisher).clock(clock).batchSize(40).workers(4).build()) {
            assertThat(relay.runOnce().completed()).isEqualTo(40);
        }
        assertThat(publisher.overlaps).isEmpty();
        assertThat(publisher.maxConcurrentCalls.get())
                .as("workers overlapped in time")
                .isGreaterThan(1);
    }

    @Test
    void whenAMessageFails_theLaterMessagesOfItsKey_areGivenBackUntried_andStayBehindIt() {
        enqueue(message("a1", "a"), message("b1", "b"), message("a2", "a"), message("a3", "a"));
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.failing("a1"::equals);
        try (Relay relay =
                relayOn(store, publisher).backoff(attempt -> Duration.ofMinutes(1)).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(4, 1, 1, 1, 0, 2));
        }
        assertThat(publisher.publishedIdsInOrder()).containsExactlyInAnyOrder("a1", "b1");
        Instant retryAt = store.releases.get(0).availableAt();
        assertThat(store.idOf(store.releases.get(0).receipt())).isEqualTo("a1");
        assertThat(retryAt).isAfterOrEqualTo(clock.instant().plus(Duration.ofMinutes(1)));
        assertThat(store.abandonments)
                .as("one abandon call for the held-back messages")
                .singleElement()
                .satisfies(a -> assertThat(store.idsOf(a.receipts())).containsExactly("a2", "a3"));
        assertThat(observer.deliveries)
                .extracting(o -> o.messageId() + ":" + o.outcome())
                .containsExactly("a1:RELEASED", "b1:COMPLETED", "a2:ABANDONED", "a3:ABANDONED");
        assertThat(observer.deliveries)
                .filteredOn(o -> o.outcome() == Outcome.ABANDONED)
                .allSatisfy(
                        o -> {
                            assertThat(o.key()).hasValue("a");
                            assertThat(o.duration()).isZero();
                            assertThat(o.error())
                                    .hasValueSatisfying(
                                            e -> assertThat(e).hasMessageContaining("held back"));
                        });
        assertThat(memory.attempts("a2")).as("no attempt used up").hasValue(0);
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .as("the store keeps a2 and a3 behind a1 until its retry time")
                .isEmpty();

        // At a1's retry time the key comes back in order: a1 first, its followers once it is done.
        clock.advance(Duration.between(clock.instant(), retryAt));
        Fixtures.ScriptedPublisher retry = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay = Relay.builder(store, retry).clock(clock).build()) {
            assertThat(relay.runOnce().completed()).isEqualTo(1);
            assertThat(relay.runOnce().completed()).isEqualTo(2);
        }
        assertThat(retry.publishedIdsInOrder()).containsExactly("a1", "a2", "a3");
    }

    @Test
    void
            whenAMessageIsDeadLettered_theLaterMessagesOfItsKey_areGivenBackUntried_behindTheDeadLetter() {
        enqueue(message("a1", "a"), message("a2", "a"));
        Fixtures.ScriptedPublisher publisher =
                new Fixtures.ScriptedPublisher(
                        m -> PublishOutcome.failed(new PermanentFailureException("poison")));
        try (Relay relay = relayOn(store, publisher).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(2, 0, 0, 0, 1, 1));
        }
        assertThat(publisher.publishedIdsInOrder()).containsExactly("a1");
        assertThat(store.releases).isEmpty();
        assertThat(observer.deliveries)
                .extracting(Observation::outcome)
                .containsExactly(Outcome.DEAD_LETTERED, Outcome.ABANDONED);
        assertThat(memory.attempts("a2")).hasValue(0);
        assertThat(memory.claim(new ClaimRequest("x", clock.instant(), Duration.ofMinutes(1), 10)))
                .as("the dead letter blocks its key")
                .isEmpty();
    }

    @Test
    void lanes_areDealtToWorkers_balancedByMessageCount() {
        List<Tracked> claimed = new ArrayList<>();
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            messages.add(Fixtures.message("hot" + i, "hot"));
        }
        messages.addAll(Fixtures.messages("cold", 5));
        for (Message m : messages) {
            claimed.add(
                    new Tracked(new Delivery(m, "r-" + m.id(), 1, Instant.EPOCH), claimed.size()));
        }
        List<Lanes.Group> groups = Lanes.plan(claimed, 2);
        assertThat(groups).extracting(g -> g.messages).containsExactlyInAnyOrder(5, 5);
        assertThat(groups)
                .anySatisfy(
                        g ->
                                assertThat(g.lanes)
                                        .singleElement()
                                        .satisfies(lane -> assertThat(lane.items).hasSize(5)));

        assertThat(Lanes.plan(claimed.subList(5, 10), 3))
                .as("keyless messages are lanes of their own")
                .extracting(g -> g.messages)
                .containsExactlyInAnyOrder(2, 2, 1);
        assertThat(Lanes.plan(claimed.subList(0, 5), 4))
                .as("one key, one lane, one worker")
                .hasSize(1);
    }
}
