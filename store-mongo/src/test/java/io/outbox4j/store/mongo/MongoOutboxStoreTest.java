package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the store does to its documents on a real wire peer (the shared MongoDB server): the stored
 * shape, duplicate and limit errors, sub-microsecond rounding, receipts of several claims in one
 * completion, and documents the store did not write.
 */
class MongoOutboxStoreTest {
    /** The enqueue clock: 2030-01-02T03:04:05.123456Z. */
    private static final Instant ENQUEUED = Instant.parse("2030-01-02T03:04:05.123456Z");

    private static final Duration LEASE = Duration.ofMinutes(5);

    private MongoOutboxStore store;
    private int ids;

    @BeforeEach
    void freshCollection() {
        store = Mongo.storeAt("store", ENQUEUED);
    }

    private Message.Builder message() {
        return Message.builder()
                .id("m-" + ++ids)
                .topic("orders.created")
                .module("orders")
                .payload("p" + ids);
    }

    private void enqueue(Message... messages) {
        store.insert(null, List.of(messages));
    }

    private BsonDocument stored(String id) {
        return store.collection().find(new BsonDocument("_id", new BsonString(id))).first();
    }

    private List<Delivery> claim(String owner, Instant at, int limit) {
        return store.claim(new ClaimRequest(owner, at, LEASE, limit));
    }

    @Test
    void enqueue_storesEveryFieldExactlyWithMicrosecondTimestampsAndHeadersInOrder() {
        Message m =
                message()
                        .key("customer-7")
                        .contentType("application/json; charset=UTF-8")
                        .payload(new byte[] {0, (byte) 0xFF, 42})
                        .header("z-last-alphabetically", "1")
                        .header("a-first", "2")
                        .header("m", "")
                        .occurredAt(Instant.parse("2029-12-31T23:59:59.999999Z"))
                        .build();
        enqueue(m);

        BsonDocument d = stored(m.id());
        assertThat(d.getInt64("occurredAt").getValue())
                .isEqualTo(Micros.exact(m.occurredAt(), "t"));
        assertThat(d.getInt64("enqueuedAt").getValue()).isEqualTo(Micros.exact(ENQUEUED, "t"));
        assertThat(d.getInt64("availableAt").getValue())
                .as(
                        "without notBefore a message is available from its enqueue time, in nanoseconds")
                .isEqualTo(Nanos.of(ENQUEUED));
        assertThat(d.getBinary("payload").getData()).containsExactly(0, 0xFF, 42);
        assertThat(d.getArray("headers"))
                .extracting(h -> h.asDocument().getString("n").getValue())
                .containsExactly("z-last-alphabetically", "a-first", "m");
        assertThat(d.getString("contentType").getValue())
                .isEqualTo("application/json; charset=utf-8");
        assertThat(d.getInt32("attempts").getValue()).isZero();
        assertThat(d.getBoolean("parked").getValue()).isFalse();
        assertThat(d.containsKey("notBefore") || d.containsKey("parkedBehind")).isFalse();
        assertThat(d.containsKey("owner") || d.containsKey("receipt") || d.containsKey("deadAt"))
                .isFalse();

        Delivery got = claim("relay-1", ENQUEUED, 10).get(0);
        assertThat(got.message()).isEqualTo(m);
        assertThat(got.message().occurredAt())
                .isEqualTo(Instant.parse("2029-12-31T23:59:59.999999Z"));
    }

    @Test
    void enqueue_delayedMessageIsAvailableFromNotBefore() {
        Instant notBefore = ENQUEUED.plus(Duration.ofHours(1)).plusNanos(7000);
        Message m = message().notBefore(notBefore).build();
        enqueue(m);

        assertThat(stored(m.id()).getInt64("notBefore").getValue())
                .isEqualTo(Micros.exact(notBefore, "t"));
        assertThat(stored(m.id()).getInt64("availableAt").getValue())
                .isEqualTo(Nanos.of(notBefore));
        assertThat(claim("relay-1", notBefore.minusNanos(1), 10)).isEmpty();
        assertThat(claim("relay-1", notBefore, 10)).extracting(d -> d.message()).containsExactly(m);
    }

    @Test
    void enqueue_batchGetsIncreasingSequenceNumbersInListOrder() {
        List<Message> batch = List.of(message().build(), message().build(), message().build());
        enqueue(batch.toArray(Message[]::new));
        enqueue(message().build());

        List<Long> seqs = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            seqs.add(stored("m-" + i).getInt64("seq").getValue());
        }
        assertThat(seqs).isSorted().doesNotHaveDuplicates();
        assertThat(claim("relay-1", ENQUEUED, 10))
                .extracting(d -> d.message().id())
                .containsExactly("m-1", "m-2", "m-3", "m-4");
    }

    @Test
    void enqueue_duplicateIdIsRejectedNamingTheId_alsoInsideABatch() {
        Message first = message().build();
        enqueue(first);

        assertThatThrownBy(() -> enqueue(first.toBuilder().payload("other").build()))
                .isInstanceOf(DuplicateMessageException.class)
                .hasMessage("message id 'm-1' is already in the outbox; ids must be unique")
                .satisfies(
                        e ->
                                assertThat(((DuplicateMessageException) e).messageId())
                                        .isEqualTo("m-1"));
        Message fresh = message().build();
        assertThatThrownBy(() -> enqueue(fresh, first))
                .isInstanceOf(DuplicateMessageException.class)
                .satisfies(
                        e ->
                                assertThat(((DuplicateMessageException) e).messageId())
                                        .isEqualTo("m-1"));
        assertThat(stored("m-1").getBinary("payload").getData()).asString().isEqualTo("p1");
    }

    @Test
    void enqueue_sameIdTwiceInOneListIsRejectedBeforeAnythingIsWritten() {
        Message a = message().build();
        Message b = message().build();
        assertThatThrownBy(() -> enqueue(a, b, a))
                .isInstanceOf(DuplicateMessageException.class)
                .hasMessageContaining("appears twice in one batch")
                .satisfies(
                        e ->
                                assertThat(((DuplicateMessageException) e).messageId())
                                        .isEqualTo(a.id()));
        assertThat(store.collection().countDocuments()).isZero();
    }

    @Test
    void enqueue_messageOverTheStoreLimitsIsRejectedAndNothingIsWritten() {
        MongoOutboxStore small =
                MongoOutboxStore.builder()
                        .client(Mongo.client())
                        .database(Mongo.DATABASE)
                        .collection(store.collection().getNamespace().getCollectionName())
                        .limits(MessageLimits.DEFAULTS.withMaxPayloadBytes(10))
                        .build();
        Message ok = message().payload("0123456789").build();
        Message big = message().payload("0123456789A").build();

        assertThatThrownBy(() -> small.insert(null, List.of(ok, big)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "payload of message 'm-2' is 11 bytes, over the 10 limit of this store");
        assertThat(store.collection().countDocuments()).isZero();
        assertThatThrownBy(() -> small.insert(null, java.util.Arrays.asList(ok, null)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("messages[1] must not be null");
    }

    @Test
    void claim_release_deadLetter_moveTheOneAvailabilityField() {
        Message m = message().build();
        enqueue(m);
        Instant now = ENQUEUED.plusSeconds(1);

        Delivery d = claim("relay-1", now, 10).get(0);
        BsonDocument leased = stored(m.id());
        assertThat(leased.getInt64("availableAt").getValue()).isEqualTo(Nanos.of(now.plus(LEASE)));
        assertThat(leased.getString("owner").getValue()).isEqualTo("relay-1");
        assertThat(d.receipt())
                .startsWith(leased.getString("receipt").getValue() + ".")
                .endsWith(m.id());
        assertThat(leased.getInt32("attempts").getValue()).isEqualTo(1);

        Instant retryAt = now.plusSeconds(30);
        assertThat(store.release(new Release("relay-1", d.receipt(), retryAt, "broker down")))
                .isTrue();
        BsonDocument released = stored(m.id());
        assertThat(released.getInt64("availableAt").getValue()).isEqualTo(Nanos.of(retryAt));
        assertThat(released.getString("lastError").getValue()).isEqualTo("broker down");
        assertThat(released.containsKey("owner") || released.containsKey("receipt")).isFalse();

        Delivery again = claim("relay-2", retryAt, 10).get(0);
        assertThat(again.attempt()).isEqualTo(2);
        Instant deadAt = retryAt.plusSeconds(1);
        assertThat(store.deadLetter(new DeadLetter("relay-2", again.receipt(), "poison", deadAt)))
                .isTrue();
        BsonDocument dead = stored(m.id());
        assertThat(dead.containsKey("availableAt"))
                .as("a dead letter leaves the claim path")
                .isFalse();
        assertThat(dead.containsKey("receipt")).isFalse();
        assertThat(dead.getString("deadReason").getValue()).isEqualTo("poison");
        assertThat(dead.getInt64("deadAt").getValue()).isEqualTo(Nanos.of(deadAt));
        assertThat(dead.getString("owner").getValue())
                .as("who gave it up is kept")
                .isEqualTo("relay-2");
        assertThat(dead.getString("lastError").getValue()).isEqualTo("broker down");
        assertThat(claim("relay-3", Instant.parse("2100-01-01T00:00:00Z"), 10)).isEmpty();
    }

    @Test
    void release_isClaimableFromAvailableAtToTheNanosecond_neverBefore() {
        enqueue(message().build());
        Delivery d = claim("relay-1", ENQUEUED, 1).get(0);
        Instant retryAt = ENQUEUED.plusSeconds(10).plusNanos(1500);
        store.release(new Release("relay-1", d.receipt(), retryAt, "retry"));

        assertThat(claim("relay-1", retryAt.minusNanos(1), 1)).isEmpty();
        assertThat(claim("relay-1", retryAt, 1)).hasSize(1);
    }

    @Test
    void complete_takesReceiptsOfSeveralClaimsAndReportsMadeUpOnesStale() {
        for (int i = 0; i < 6; i++) {
            enqueue(message().build());
        }
        List<String> receipts = new ArrayList<>();
        claim("relay-1", ENQUEUED, 2).forEach(d -> receipts.add(d.receipt()));
        claim("relay-1", ENQUEUED, 2).forEach(d -> receipts.add(d.receipt()));
        List<Delivery> third = claim("relay-1", ENQUEUED, 2);
        third.forEach(d -> receipts.add(d.receipt()));
        String madeUp = "0123456789abcdef0123456789abcdef.m-1";
        receipts.add(madeUp);
        receipts.add("not-a-receipt");

        assertThat(store.complete(new Completion("relay-1", receipts)))
                .containsExactly(madeUp, "not-a-receipt");
        assertThat(store.collection().countDocuments()).isZero();
        assertThat(store.complete(new Completion("relay-1", List.of(third.get(0).receipt()))))
                .containsExactly(third.get(0).receipt());
    }

    @Test
    void complete_ofAnotherOwnersLeaseChangesNothing() {
        enqueue(message().build(), message().build());
        List<Delivery> mine = claim("relay-1", ENQUEUED, 1);
        List<Delivery> theirs = claim("relay-2", ENQUEUED, 1);
        List<String> both = List.of(mine.get(0).receipt(), theirs.get(0).receipt());

        assertThat(store.complete(new Completion("relay-1", both)))
                .containsExactly(theirs.get(0).receipt());
        assertThat(stored(theirs.get(0).message().id())).isNotNull();
        assertThat(stored(mine.get(0).message().id())).isNull();
    }

    @Test
    void claim_deadLettersADocumentThatIsNotAValidMessage_andDeliversTheRest() {
        Mongo.insertNotAMessage(store);
        Message good = message().build();
        enqueue(good);

        List<Delivery> got = claim("relay-1", ENQUEUED, 10);
        assertThat(got).extracting(Delivery::message).containsExactly(good);
        BsonDocument dead = stored("written-by-hand");
        assertThat(dead.getString("deadReason").getValue())
                .isEqualTo(
                        "stored document is not a valid outbox message: field 'topic' must be a string, but was INT32");
        assertThat(dead.containsKey("availableAt")).isFalse();
        assertThat(store.complete(new Completion("relay-1", List.of(got.get(0).receipt()))))
                .isEmpty();
        assertThat(claim("relay-1", ENQUEUED.plus(Duration.ofDays(1)), 10))
                .as("the dead-lettered document is never claimed again")
                .isEmpty();
    }

    @Test
    void claim_takesWhatIsLeftWhenAnotherClaimerGotSomeCandidatesFirst() {
        for (int i = 0; i < 30; i++) {
            enqueue(message().build());
        }
        MongoOutboxStore other =
                Mongo.store(
                        Mongo.secondClient(),
                        store.collection().getNamespace().getCollectionName());
        List<Delivery> first = other.claim(new ClaimRequest("relay-2", ENQUEUED, LEASE, 7));
        List<Delivery> second = claim("relay-1", ENQUEUED, 20);
        assertThat(first)
                .extracting(d -> d.message().id())
                .containsExactly("m-1", "m-2", "m-3", "m-4", "m-5", "m-6", "m-7");
        assertThat(second)
                .hasSize(20)
                .extracting(d -> d.message().id())
                .startsWith("m-8")
                .endsWith("m-27");
        assertThat(claim("relay-1", ENQUEUED, 20))
                .extracting(d -> d.message().id())
                .containsExactly("m-28", "m-29", "m-30");
    }
}
