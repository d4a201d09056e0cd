package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.StaleLeaseException;
import io.outbox4j.engine.RecordingStore.Call;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Short leases, renewed: one extend call per batch every third of the lease, before the lease ends;
 * no hand-over once the lease can no longer be proven; a stale renewal drops its message. The clock
 * is moved by hand; the batch re-reads it every few milliseconds.
 */
class LeaseRenewalTest extends RelayRig {
    private static final Duration LEASE = Duration.ofSeconds(15);

    private final Instant start = clock.instant();

    private Relay.Builder relay(RecordingStore on, Publisher publisher) {
        return relayOn(on, publisher)
                .owner("renewing")
                .clockCheck(Duration.ofMillis(5))
                .lease(LEASE)
                .workers(1);
    }

    /**
     * Enqueues k1, k2 and k3 of key k and runs one batch over {@code on}, asserting its result,
     * with a publisher whose every call takes 6 s by the relay's clock: k1 from +0s, k2 from +6s
     * (9s of the 15s lease left), k3 would start at +12s with 3s left, under the 5s margin.
     *
     * @return the publisher
     */
    private Fixtures.ScriptedPublisher runLaneOfSixSecondCalls(
            RecordingStore on, Relay.Result expected) {
        memory.enqueueCommitted(lane("k", 3));
        Fixtures.ScriptedPublisher sixSecondsEach =
                Fixtures.ScriptedPublisher.taking(clock, Duration.ofSeconds(6));
        try (Relay relay = relay(on, sixSecondsEach).build()) {
            assertThat(relay.runOnce()).isEqualTo(expected);
        }
        return sixSecondsEach;
    }

    private static List<io.outbox4j.api.Message> lane(String key, int n) {
        List<io.outbox4j.api.Message> list = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            list.add(Fixtures.message(key + i, key));
        }
        return list;
    }

    @Test
    void aBatchThatFinishesWithinAThirdOfItsLease_isNeverRenewed() {
        memory.enqueueCommitted(Fixtures.messages("m", 4));
        try (Relay relay = relay(store, Fixtures.ScriptedPublisher.accepting()).build()) {
            assertThat(relay.runOnce().completed()).isEqualTo(4);
        }
        assertThat(store.extensions).isEmpty();
    }

    @Test
    void aLongCall_hasItsBatchRenewedBeforeTheLeaseEnds_withOneExtendForAllHeldMessages()
            throws Exception {
        memory.enqueueCommitted(Fixtures.messages("m", 4));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch answer = new CountDownLatch(1);
        Publisher slow = Fixtures.ScriptedPublisher.held(entered, answer);
        Relay.Result[] result = new Relay.Result[1];
        try (Relay relay = relay(store, slow).build()) {
            Thread batch = new Thread(() -> result[0] = relay.runOnce());
            batch.start();
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();

            clock.advance(Duration.ofSeconds(6));
            Fixtures.await("a renewal", Duration.ofSeconds(5), () -> !store.extensions.isEmpty());
            Extension first = store.extensions.get(0);
            assertThat(first.owner()).isEqualTo("renewing");
            assertThat(first.until())
                    .as("renewed at +6s, before the lease ended at +15s, for another lease")
                    .isEqualTo(start.plusSeconds(6).plus(LEASE));
            assertThat(store.idsOf(first.receipts()))
                    .as("one call for every message the batch holds")
                    .containsExactly("m0", "m1", "m2", "m3");

            clock.advance(Duration.ofSeconds(10));
            assertThat(memory.claim(new ClaimRequest("other", clock.instant(), LEASE, 10)))
                    .as("at +16s the renewed leases still hold")
                    .isEmpty();
            Fixtures.await(
                    "a second renewal", Duration.ofSeconds(5), () -> store.extensions.size() == 2);
            answer.countDown();
            batch.join(5_000);
        }
        assertThat(result[0]).isEqualTo(new Relay.Result(4, 4, 4, 0, 0, 0));
        assertThat(store.extensions.get(1).until()).isEqualTo(start.plusSeconds(16).plus(LEASE));
    }

    @Test
    void whenRenewalsFail_noMessageIsHandedOverOnceItsLeaseCannotBeProven_andItIsGivenBack() {
        RecordingStore failingExtend =
                new RecordingStore(memory)
                        .failing(Call.EXTEND, new IllegalStateException("connection refused"));
        Fixtures.ScriptedPublisher sixSecondsEach =
                runLaneOfSixSecondCalls(failingExtend, new Relay.Result(3, 2, 2, 0, 0, 1));
        assertThat(sixSecondsEach.publishedIdsInOrder()).containsExactly("k1", "k2");
        assertThat(failingExtend.extensions).as("renewals were tried").isNotEmpty();
        assertThat(observer.storeErrors)
                .isNotEmpty()
                .allSatisfy(e -> assertThat(e).hasMessage("connection refused"));
        Observation k3 = observer.deliveries.get(2);
        assertThat(k3.messageId()).isEqualTo("k3");
        assertThat(k3.outcome()).isEqualTo(Outcome.ABANDONED);
        assertThat(k3.error())
                .hasValueSatisfying(
                        e -> assertThat(e).hasMessageContaining("lease could not be renewed"));
        assertThat(failingExtend.abandonments)
                .singleElement()
                .satisfies(
                        a -> assertThat(failingExtend.idsOf(a.receipts())).containsExactly("k3"));
        assertThat(memory.attempts("k3")).as("k3 was never tried").hasValue(0);
        assertThat(CapturedLogs.storeLog("renewing"))
                .contains(
                        "relay 'renewing': store failed to renew leases:"
                                + " java.lang.IllegalStateException: connection refused",
                        "relay 'renewing': leases could not be renewed (last confirmed until"
                                + " 2030-01-01T00:00:15Z); 1 message(s) not handed to the"
                                + " publisher but given back");
    }

    @Test
    void whenTheStoreIsDown_theMessagesThatCannotBeProven_areLeftToTheirLease() {
        IllegalStateException refused = new IllegalStateException("connection refused");
        RecordingStore down =
                new RecordingStore(memory)
                        .failing(Call.EXTEND, refused)
                        .failing(Call.ABANDON, refused);
        runLaneOfSixSecondCalls(down, new Relay.Result(3, 2, 2, 0, 0, 0));
        assertThat(observer.outcomes())
                .containsExactly(Outcome.COMPLETED, Outcome.COMPLETED, Outcome.NOT_RECORDED);
        assertThat(memory.claim(new ClaimRequest("other", clock.instant(), LEASE, 10)))
                .as("at +12s k3 is still leased")
                .isEmpty();
        clock.advance(Duration.ofSeconds(3));
        assertThat(memory.claim(new ClaimRequest("other", clock.instant(), LEASE, 10)))
                .as("at +15s its lease has ended: claimable again")
                .extracting(d -> d.message().id())
                .containsExactly("k3");
    }

    @Test
    void aRenewalThatComesBackStale_dropsThoseMessages_whichAreNeverPublished() {
        memory.enqueueCommitted(lane("k", 3));
        List<String> claimedByOther = new ArrayList<>();
        Fixtures.ScriptedPublisher pastTheLease =
                new Fixtures.ScriptedPublisher(
                        m -> {
                            // The call outlives the lease and another relay claims the key.
                            clock.advance(LEASE.plusSeconds(1));
                            memory.claim(new ClaimRequest("other", clock.instant(), LEASE, 10))
                                    .forEach(d -> claimedByOther.add(d.message().id()));
                            return PublishOutcome.published();
                        });
        try (Relay relay = relay(store, pastTheLease).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(3, 1, 0, 0, 0, 0));
        }
        assertThat(claimedByOther).containsExactly("k1", "k2", "k3");
        assertThat(pastTheLease.publishedIdsInOrder())
                .as("k2 and k3 are dropped, not published")
                .containsExactly("k1");
        assertThat(store.extensions).hasSize(1);
        assertThat(observer.outcomes())
                .containsExactly(Outcome.STALE, Outcome.STALE, Outcome.STALE);
        assertThat(observer.deliveries.get(1).error())
                .hasValueSatisfying(
                        e ->
                                assertThat(e)
                                        .isInstanceOf(StaleLeaseException.class)
                                        .hasMessageContaining("lease lost"));
        assertThat(store.abandonments).as("nothing to give back: the leases are gone").isEmpty();
        assertThat(store.completedPerId).isEmpty();
    }

    @Test
    void aPartlyStaleRenewal_dropsOnlyTheLostMessage_andTheOtherKeysGoOn() {
        String[] lostReceipt = new String[1];
        RecordingStore partlyStale =
                new RecordingStore(memory) {
                    @Override
                    public Set<String> extend(Extension extension) {
                        super.extensions.add(extension);
                        List<String> kept = new ArrayList<>();
                        for (String r : extension.receipts()) {
                            if ("a2".equals(idOf(r))) {
                                lostReceipt[0] = r;
                            } else {
                                kept.add(r);
                            }
                        }
                        delegate.extend(new Extension(extension.owner(), kept, extension.until()));
                        return lostReceipt[0] == null ? Set.of() : Set.of(lostReceipt[0]);
                    }
                };
        List<io.outbox4j.api.Message> messages = new ArrayList<>(lane("a", 2));
        messages.addAll(lane("b", 2));
        memory.enqueueCommitted(messages);
        Fixtures.ScriptedPublisher publisher =
                new Fixtures.ScriptedPublisher(
                        m -> {
                            if (m.id().equals("a1")) {
                                clock.advance(Duration.ofSeconds(6));
                            }
                            return PublishOutcome.published();
                        });
        try (Relay relay = relay(partlyStale, publisher).build()) {
            assertThat(relay.runOnce()).isEqualTo(new Relay.Result(4, 3, 3, 0, 0, 0));
        }
        assertThat(publisher.calls).containsExactly(List.of("a1", "b1"), List.of("b2"));
        assertThat(observer.deliveries)
                .extracting(o -> o.messageId() + ":" + o.outcome())
                .containsExactly("a1:COMPLETED", "a2:STALE", "b1:COMPLETED", "b2:COMPLETED");
    }
}
