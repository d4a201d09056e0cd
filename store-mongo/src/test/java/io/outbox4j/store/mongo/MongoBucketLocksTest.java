package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import io.outbox4j.api.Buckets;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bucket locks (docs/scale-out.md, "No lock shared by every claimer"): free after every claim
 * and completion, taken over from a holder that stopped renewing, never waited for beyond their
 * bound, and a busy bucket stalls nothing of the others.
 */
class MongoBucketLocksTest {
    private static final Duration LEASE = Duration.ofMillis(400);

    /** A key in the bucket of "K" and one in another bucket. */
    private static final String OTHER = otherBucketThan("K");

    private String collection;
    private MongoOutboxStore store;
    private MongoCollection<BsonDocument> locks;
    private Instant now;
    private final AtomicBoolean renewing = new AtomicBoolean(true);
    private final ExecutorService background = Executors.newCachedThreadPool();

    /** The renewers' runs: a renewer that failed fails the test. */
    private final List<Future<?>> renewers = new ArrayList<>();

    @BeforeEach
    void freshCollection() {
        collection = Mongo.freshCollection("lock");
        store = build(Duration.ofSeconds(5));
        store.createIndexes();
        locks =
                Mongo.client()
                        .getDatabase(Mongo.DATABASE)
                        .getCollection(
                                collection + MongoOutboxStore.LOCK_COLLECTION_SUFFIX,
                                BsonDocument.class);
        store.insert(
                null,
                List.of(
                        message("k-1", "K"),
                        message("k-2", "K"),
                        message("o-1", OTHER),
                        message("o-2", OTHER)));
        now = Instant.now().plusSeconds(1);
    }

    @AfterEach
    void stopHolders() throws Exception {
        renewing.set(false);
        background.shutdown();
        assertThat(background.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        for (Future<?> renewer : renewers) {
            renewer.get(0, TimeUnit.SECONDS); // done: rethrows what a renewer threw
        }
    }

    private static Message message(String id, String key) {
        return Message.builder().id(id).key(key).topic("t").module("m").build();
    }

    private static String otherBucketThan(String key) {
        int bucket = Buckets.of(key);
        return IntStream.range(0, 1000)
                .mapToObj(i -> "other-" + i)
                .filter(k -> Buckets.of(k) != bucket)
                .findFirst()
                .orElseThrow();
    }

    private MongoOutboxStore build(Duration wait) {
        return MongoOutboxStore.builder()
                .client(Mongo.client())
                .database(Mongo.DATABASE)
                .collection(collection)
                .bucketLocks(LEASE, wait)
                .build();
    }

    private List<Delivery> claim(MongoOutboxStore on, int limit) {
        return on.claim(new ClaimRequest("relay", now, Duration.ofMinutes(1), limit));
    }

    private BsonDocument lockOf(String key) {
        return locks.find(new BsonDocument("_id", BucketLocks.idOf(Buckets.of(key)))).first();
    }

    private boolean parked(String id) {
        return store.collection()
                .find(new BsonDocument("_id", new BsonString(id)))
                .first()
                .getBoolean("parked")
                .getValue();
    }

    private void heldBy(String holder, int bucket) {
        locks.insertOne(
                new BsonDocument("_id", BucketLocks.idOf(bucket))
                        .append("holder", new BsonString(holder))
                        .append("version", new BsonInt64(7)));
    }

    /** A holder that keeps renewing the lock of a bucket until the test ends. */
    private void heldAndRenewedBy(String holder, int bucket) {
        heldBy(holder, bucket);
        renewers.add(
                background.submit(
                        () -> {
                            while (renewing.get()) {
                                locks.updateOne(
                                        new BsonDocument("_id", BucketLocks.idOf(bucket)),
                                        BsonDocument.parse("{$inc: {version: NumberLong(1)}}"));
                                TimeUnit.MILLISECONDS.sleep(LEASE.toMillis() / 4);
                            }
                            return null;
                        }));
    }

    private static Duration since(long started) {
        return Duration.ofNanos(System.nanoTime() - started);
    }

    @Test
    void aClaimThatParksNothingTakesNoLock_aClaimThatParksAndAKeyedCompletionGiveTheirsBack() {
        List<Delivery> first = claim(store, 1);
        assertThat(first).extracting(d -> d.message().id()).containsExactly("k-1");
        assertThat(locks.countDocuments()).as("nothing was parked: no lock taken").isZero();

        assertThat(claim(store, 10))
                .extracting(d -> d.message().id())
                .containsExactly("o-1", "o-2");
        assertThat(parked("k-2")).as("k-2 waits behind k-1").isTrue();
        assertThat(lockOf("K").get("holder")).isEqualTo(BsonNull.VALUE);
        long version = lockOf("K").getInt64("version").getValue();

        store.complete(new Completion("relay", List.of(first.get(0).receipt())));
        assertThat(lockOf("K").get("holder")).isEqualTo(BsonNull.VALUE);
        assertThat(lockOf("K").getInt64("version").getValue())
                .as("the keyed completion took and gave back its bucket's lock")
                .isGreaterThan(version);
        assertThat(parked("k-2")).as("the completion unparked k-2").isFalse();
    }

    @Test
    void aHolderThatStoppedRenewingIsTakenOverAfterOneLeaseOfTheWaitersOwnClock() {
        List<Delivery> got = claim(store, 1);
        heldBy("a-remover-that-crashed", Buckets.of("K"));
        long started = System.nanoTime();

        store.complete(new Completion("relay", List.of(got.get(0).receipt())));

        assertThat(since(started))
                .as("the waiter watched the unchanged lock for a whole lease first")
                .isGreaterThanOrEqualTo(LEASE);
        assertThat(
                        store.collection()
                                .countDocuments(new BsonDocument("_id", new BsonString("k-1"))))
                .isZero();
        assertThat(lockOf("K").get("holder")).isEqualTo(BsonNull.VALUE);
    }

    @Test
    void aRemovalGivesUpAfterItsWait_whileTheHolderKeepsRenewing_andRemovesNothing() {
        List<Delivery> got = claim(store, 1);
        heldAndRenewedBy("a-busy-remover", Buckets.of("K"));
        MongoOutboxStore impatient = build(Duration.ofMillis(900));
        long started = System.nanoTime();

        assertThatThrownBy(
                        () ->
                                impatient.complete(
                                        new Completion("relay", List.of(got.get(0).receipt()))))
                .isInstanceOf(OutboxException.class)
                .hasMessageContaining(
                        "complete waited 900 ms for the lock of bucket " + Buckets.of("K"));
        assertThat(since(started)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
        assertThat(lockOf("K").getString("holder").getValue())
                .as("a renewed lock is never taken over")
                .isEqualTo("a-busy-remover");
        assertThat(
                        store.collection()
                                .countDocuments(new BsonDocument("_id", new BsonString("k-1"))))
                .as("nothing removed")
                .isOne();
    }

    @Test
    void aBusyBucketStallsNoClaimAndNoCompletionOfOtherBuckets_andItsRowsAreLeftUnparked() {
        List<Delivery> first = claim(store, 1); // k-1
        heldAndRenewedBy("a-frozen-member", Buckets.of("K"));
        long started = System.nanoTime();

        List<Delivery> second = claim(store, 1);
        store.complete(new Completion("relay", List.of(second.get(0).receipt())));
        List<Delivery> third = claim(store, 1);

        assertThat(since(started))
                .as("neither the claims nor the completion waited for the busy bucket")
                .isLessThan(LEASE);
        assertThat(second).extracting(d -> d.message().id()).containsExactly("o-1");
        assertThat(third).extracting(d -> d.message().id()).containsExactly("o-2");
        assertThat(parked("k-2"))
                .as("k-2 could not be parked while its bucket was busy: it stays a candidate")
                .isFalse();
        assertThat(first).hasSize(1);
    }

    @Test
    void aRemovalWaitingForALockHoldsNoneAboveIt() throws Exception {
        BucketLocks bucketLocks = store.keyOrder().locks();
        heldAndRenewedBy("holder-of-5", 5);
        Future<BucketLocks.Held> waiter =
                background.submit(() -> bucketLocks.acquire("test", Set.of(3, 5, 7)));
        awaitHolderOf(3, h -> !h.isNull() && !h.equals(new BsonString("holder-of-5")));
        awaitHolderOf(7, BsonValue::isNull);

        long watchUntil = System.nanoTime() + LEASE.toNanos();
        while (System.nanoTime() - watchUntil < 0) {
            assertThat(holderOf(7))
                    .as("the lock of bucket 7 is not held while bucket 5 is waited for")
                    .isEqualTo(BsonNull.VALUE);
            assertThat(waiter).isNotDone();
        }
        locks.updateOne(
                new BsonDocument("_id", BucketLocks.idOf(5)),
                new BsonDocument("$set", new BsonDocument("holder", BsonNull.VALUE)));
        try (BucketLocks.Held held = waiter.get(5, TimeUnit.SECONDS)) {
            assertThat(held.buckets()).containsExactlyInAnyOrder(3, 5, 7);
        }
        assertThat(holderOf(3)).isEqualTo(BsonNull.VALUE);
        assertThat(holderOf(7)).isEqualTo(BsonNull.VALUE);
    }

    private BsonValue holderOf(int bucket) {
        BsonDocument d = locks.find(new BsonDocument("_id", BucketLocks.idOf(bucket))).first();
        return d == null ? null : d.get("holder", BsonNull.VALUE);
    }

    private void awaitHolderOf(int bucket, java.util.function.Predicate<BsonValue> holder)
            throws Exception {
        CompletableFuture<Void> seen =
                CompletableFuture.runAsync(
                        () -> {
                            while (true) {
                                BsonValue h = holderOf(bucket);
                                if (h != null && holder.test(h)) {
                                    return;
                                }
                                Thread.onSpinWait();
                            }
                        },
                        background);
        seen.get(5, TimeUnit.SECONDS);
    }

    @Test
    void aMembersRenewalUnparksKeysParkedBehindNothing_andLeavesTheBlockedOnesParked() {
        // k-2 parked behind k-1 (blocked); z-1 parked with nothing before it (an orphan, as a
        // relay of an older version could leave it)
        claim(store, 1);
        claim(store, 1);
        assertThat(parked("k-2")).isTrue();
        store.insert(null, List.of(message("z-1", "Z")));
        store.collection()
                .updateOne(
                        new BsonDocument("_id", new BsonString("z-1")),
                        new BsonDocument("$set", new BsonDocument("parked", BsonBoolean.TRUE)));

        store.renew("member", Duration.ofSeconds(10));

        assertThat(parked("z-1")).as("the orphan was unparked").isFalse();
        assertThat(parked("k-2")).as("k-2 still waits behind k-1").isTrue();
    }
}
