package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.MongoCollection;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The claim lock document: free after every claim and completion, taken over from a holder that
 * stopped renewing it, and never waited for beyond its bound.
 */
class MongoClaimLockTest {
    private static final Duration LEASE = Duration.ofMillis(400);

    private String collection;
    private MongoOutboxStore store;
    private MongoCollection<BsonDocument> locks;
    private Instant now;

    @BeforeEach
    void freshCollection() {
        collection = Mongo.freshCollection("lock");
        store = build(Duration.ofSeconds(5));
        locks =
                Mongo.client()
                        .getDatabase(Mongo.DATABASE)
                        .getCollection(
                                collection + MongoOutboxStore.LOCK_COLLECTION_SUFFIX,
                                BsonDocument.class);
        store.insert(
                null,
                List.of(
                        Message.builder().id("k-1").key("K").topic("t").module("m").build(),
                        Message.builder().id("k-2").key("K").topic("t").module("m").build()));
        now = Instant.now().plusSeconds(1);
    }

    private MongoOutboxStore build(Duration wait) {
        return MongoOutboxStore.builder()
                .client(Mongo.client())
                .database(Mongo.DATABASE)
                .collection(collection)
                .claimLock(LEASE, wait)
                .build();
    }

    private BsonDocument lock() {
        return locks.find(new BsonDocument("_id", new BsonString("claim"))).first();
    }

    private void heldBy(String holder) {
        locks.insertOne(
                new BsonDocument("_id", new BsonString("claim"))
                        .append("holder", new BsonString(holder))
                        .append("version", new BsonInt64(7)));
    }

    @Test
    void theLockIsFreeAfterAClaimAndAKeyedCompletion() {
        List<Delivery> got = store.claim(new ClaimRequest("relay", now, Duration.ofMinutes(1), 1));
        assertThat(lock().get("holder")).isEqualTo(BsonNull.VALUE);
        long version = lock().getInt64("version").getValue();

        store.complete(new Completion("relay", List.of(got.get(0).receipt())));
        assertThat(lock().get("holder")).isEqualTo(BsonNull.VALUE);
        assertThat(lock().getInt64("version").getValue())
                .as("the keyed completion took and gave back the lock")
                .isGreaterThan(version);
    }

    @Test
    void aHolderThatStoppedRenewingIsTakenOverAfterOneLeaseOfTheWaitersOwnClock() {
        heldBy("a-claimer-that-crashed");
        long started = System.nanoTime();

        List<Delivery> got = store.claim(new ClaimRequest("relay", now, Duration.ofMinutes(1), 1));

        assertThat(Duration.ofNanos(System.nanoTime() - started))
                .as("the waiter watched the unchanged lock for a whole lease first")
                .isGreaterThanOrEqualTo(LEASE);
        assertThat(got).extracting(d -> d.message().id()).containsExactly("k-1");
        assertThat(lock().get("holder")).isEqualTo(BsonNull.VALUE);
    }

    @Test
    void aClaimGivesUpAfterItsWait_whileTheHolderKeepsRenewing() throws Exception {
        heldBy("a-busy-claimer");
        MongoOutboxStore impatient = build(Duration.ofMillis(900));
        AtomicBoolean renewing = new AtomicBoolean(true);
        ExecutorService holder = Executors.newSingleThreadExecutor();
        holder.submit(
                () -> {
                    while (renewing.get()) {
                        locks.updateOne(
                                new BsonDocument("_id", new BsonString("claim")),
                                BsonDocument.parse("{$inc: {version: NumberLong(1)}}"));
                        TimeUnit.MILLISECONDS.sleep(LEASE.toMillis() / 4);
                    }
                    return null;
                });
        long started = System.nanoTime();
        try {
            assertThatThrownBy(
                            () ->
                                    impatient.claim(
                                            new ClaimRequest(
                                                    "relay", now, Duration.ofMinutes(1), 1)))
                    .isInstanceOf(OutboxException.class)
                    .hasMessageContaining("claim waited 900 ms for the claim lock");
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(900));
        } finally {
            renewing.set(false);
            holder.shutdown();
            assertThat(holder.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(lock().getString("holder").getValue())
                .as("a renewed lock is never taken over")
                .isEqualTo("a-busy-claimer");
        assertThat(store.collection().countDocuments(BsonDocument.parse("{owner: 'relay'}")))
                .isZero();
    }
}
