package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Release;
import io.outbox4j.tck.InMemoryOutboxStore;
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
class PerKeyOrderTest {
    private final MutableClock clock = new MutableClock();
    private final InMemoryOutboxStore memory = new InMemoryOutboxStore(clock);
    private final RecordingStore store = new RecordingStore(memory);
    private final Fixtures.RecordingObserver observer = new Fixtures.RecordingObserver();

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
    void whenAMessageFails_theLaterMessagesOfItsKey_areReleasedBehindIt_notPublished() {
        memory.enqueueCommitted(
                List.of(
                        Fixtures.message("a1", "a"),
                        Fixtures.message("b1", "b"),
                        Fixtures.message("a2", "a"),
                        Fixtures.message("a3", "a")));
        Fixtures.ScriptedPublisher publisher =
                new Fixtures.ScriptedPublisher(
                        m ->
                                m.id().equals("a1")
                                        ? PublishOutcome.failed(new IllegalStateException("nack"))
                                        : PublishOutcome.published());
        try (Relay relay =
                Relay.builder(store, publisher)
                        .clock(clock)
                        .observer(observer)
                        .backoff(attempt -> Duration.ofMinutes(1))
                        .build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(4, 1, 1, 3, 0));
        }
        assertThat(publisher.publishedIdsInOrder()).containsExactlyInAnyOrder("a1", "b1");
        Map<String, Instant> retryAt =
                store.releases.stream()
                        .collect(
                                Collectors.toMap(
                                        r -> store.idOf(r.receipt()), Release::availableAt));
        assertThat(retryAt.get("a1")).isAfterOrEqualTo(clock.instant().plus(Duration.ofMinutes(1)));
        assertThat(retryAt.get("a2")).as("stays behind a1").isEqualTo(retryAt.get("a1"));
        assertThat(retryAt.get("a3")).isEqualTo(retryAt.get("a1"));
        assertThat(observer.deliveries).filteredOn(o -> o.outcome() == Outcome.RELEASED).hasSize(3);
        assertThat(store.releases)
                .filteredOn(r -> !store.idOf(r.receipt()).equals("a1"))
                .allSatisfy(r -> assertThat(r.error()).contains("held back"));

        // At a1's retry time the lane comes back whole and in order.
        clock.advance(Duration.between(clock.instant(), retryAt.get("a1")));
        Fixtures.ScriptedPublisher retry = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay = Relay.builder(store, retry).clock(clock).build()) {
            assertThat(relay.runOnce().completed()).isEqualTo(3);
        }
        assertThat(retry.publishedIdsInOrder()).containsExactly("a1", "a2", "a3");
    }

    @Test
    void whenAMessageIsDeadLettered_theLaterMessagesOfItsKey_areReleasedForAnImmediateRetry() {
        memory.enqueueCommitted(List.of(Fixtures.message("a1", "a"), Fixtures.message("a2", "a")));
        Fixtures.ScriptedPublisher publisher =
                new Fixtures.ScriptedPublisher(
                        m -> PublishOutcome.failed(new PermanentFailureException("poison")));
        try (Relay relay =
                Relay.builder(store, publisher).clock(clock).observer(observer).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(2, 0, 0, 1, 1));
        }
        assertThat(publisher.publishedIdsInOrder()).containsExactly("a1");
        assertThat(store.releases)
                .singleElement()
                .satisfies(r -> assertThat(r.availableAt()).isEqualTo(clock.instant()));
        assertThat(observer.deliveries)
                .extracting(Observation::outcome)
                .containsExactly(Outcome.DEAD_LETTERED, Outcome.RELEASED);
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
            claimed.add(new Tracked(new Delivery(m, "r-" + m.id(), 1), claimed.size()));
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
