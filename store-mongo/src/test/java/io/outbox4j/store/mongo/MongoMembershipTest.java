package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How the MongoDB store keeps members: the server's clock, the documents it writes, the bucket of
 * messages enqueued by a version without membership, and the compare-and-set of the assignment.
 */
class MongoMembershipTest {
    /**
     * The builder's clock: years behind the server's, so a use of it for membership would show
     * (messages it stamps are due at once).
     */
    private static final Instant BUILDER_TIME = Instant.parse("2020-01-02T03:04:05Z");

    private static final Duration LONG = Duration.ofMinutes(5);

    private MongoOutboxStore store;
    private MongoOutboxStore second;
    private String collection;

    @BeforeEach
    void freshCollection() {
        collection = Mongo.freshCollection("members");
        store = build(Mongo.client());
        second = build(Mongo.secondClient());
        store.createIndexes();
    }

    private MongoOutboxStore build(com.mongodb.client.MongoClient client) {
        return MongoOutboxStore.builder()
                .client(client)
                .database(Mongo.DATABASE)
                .collection(collection)
                .clock(Clock.fixed(BUILDER_TIME, ZoneOffset.UTC))
                .build();
    }

    /** The server's clock as the test reads it directly. */
    private static Instant serverTime() {
        return new ServerClock(Mongo.client().getDatabase(Mongo.DATABASE)).now();
    }

    private BsonDocument owners() {
        return Mongo.client()
                .getDatabase(Mongo.DATABASE)
                .getCollection(
                        collection + MongoOutboxStore.BUCKETS_COLLECTION_SUFFIX, BsonDocument.class)
                .find(new BsonDocument("_id", new BsonString(Members.OWNERS_ID)))
                .first();
    }

    private List<String> ownersList() {
        List<String> out = new ArrayList<>();
        for (BsonValue v : owners().getArray(Members.OWNERS)) {
            out.add(v.isString() ? v.asString().getValue() : null);
        }
        return out;
    }

    private static Message message(String id, String key) {
        Message.Builder b = Message.builder().id(id).topic("orders").module("shop");
        if (key != null) {
            b.key(key);
        }
        return b.build();
    }

    /** One keyed message per bucket. */
    private static List<Message> onePerBucket() {
        List<Message> out = new ArrayList<>();
        Set<Integer> covered = new HashSet<>();
        for (int i = 0; covered.size() < Buckets.COUNT; i++) {
            String key = "k" + i;
            if (covered.add(Buckets.of(key))) {
                out.add(message("m" + i, key));
            }
        }
        return out;
    }

    private List<Delivery> claimAsMember(MongoOutboxStore on, String member, int limit) {
        // A member's claim is timed by the server's clock whatever its now; claim on it anyway.
        return on.claim(new ClaimRequest(member, serverTime(), LONG, limit, true));
    }

    private static Set<Integer> bucketsOf(List<Delivery> deliveries) {
        Set<Integer> out = new TreeSet<>();
        for (Delivery d : deliveries) {
            d.message().key().ifPresent(k -> out.add(Buckets.of(k)));
        }
        return out;
    }

    @Test
    void renew_startsTheLeaseByTheServersClock_notTheBuildersClock() {
        Instant before = serverTime();
        Membership m = store.renew("a", Duration.ofSeconds(30));
        Instant after = serverTime();

        assertThat(m.storeTime()).isBetween(before, after);
        assertThat(m.leaseUntil()).isEqualTo(m.storeTime().plusSeconds(30));
        BsonDocument doc =
                Mongo.client()
                        .getDatabase(Mongo.DATABASE)
                        .getCollection(
                                collection + MongoOutboxStore.MEMBERS_COLLECTION_SUFFIX,
                                BsonDocument.class)
                        .find(new BsonDocument("_id", new BsonString("a")))
                        .first();
        assertThat(doc.get(Members.LEASE_UNTIL).isDateTime()).isTrue();
        assertThat(doc.getDateTime(Members.LEASE_UNTIL).getValue())
                .isEqualTo(m.leaseUntil().toEpochMilli());
        assertThat(store.members())
                .singleElement()
                .satisfies(
                        member -> {
                            assertThat(member.live()).isTrue();
                            assertThat(member.buckets()).isEqualTo(Buckets.COUNT);
                        });
    }

    @Test
    void enqueue_storesTheBucketOfEveryKeyedMessage() {
        store.insert(null, List.of(message("keyed", "order-17"), message("plain", null)));

        BsonDocument keyed =
                store.collection().find(new BsonDocument("_id", new BsonString("keyed"))).first();
        BsonDocument plain =
                store.collection().find(new BsonDocument("_id", new BsonString("plain"))).first();
        assertThat(keyed.getInt32(Documents.BUCKET).getValue()).isEqualTo(Buckets.of("order-17"));
        assertThat(plain.containsKey(Documents.BUCKET)).isFalse();
    }

    @Test
    void memberClaims_takeKeyedMessagesWithoutABucket_onlyByTheirOwner_andWriteTheBucket() {
        store.renew("a", LONG);
        Set<Integer> ofB = new TreeSet<>(second.renew("b", LONG).buckets());
        Set<Integer> ofA = new TreeSet<>(store.renew("a", LONG).buckets());
        List<Message> all = onePerBucket();
        store.insert(null, all);
        // As a version without membership wrote them.
        store.collection()
                .updateMany(
                        new BsonDocument(),
                        new BsonDocument(
                                "$unset", new BsonDocument(Documents.BUCKET, new BsonString(""))));

        List<Delivery> first = claimAsMember(store, "a", 1);
        assertThat(first).hasSize(1);
        assertThat(ofA).containsAll(bucketsOf(first));

        List<Delivery> byA = claimAsMember(store, "a", ClaimRequest.MAX_LIMIT);
        List<Delivery> byB = claimAsMember(second, "b", ClaimRequest.MAX_LIMIT);
        Set<Integer> claimedByA = bucketsOf(byA);
        claimedByA.addAll(bucketsOf(first));
        assertThat(claimedByA).isEqualTo(ofA);
        assertThat(bucketsOf(byB)).isEqualTo(ofB);
        assertThat(first.size() + byA.size() + byB.size()).isEqualTo(all.size());
        for (BsonDocument d : store.collection().find()) {
            assertThat(d.getInt32(Documents.BUCKET).getValue())
                    .as("bucket written back on %s", d.get("_id"))
                    .isEqualTo(Buckets.of(d.getString(Documents.KEY).getValue()));
        }
    }

    @Test
    void concurrentRenewals_ofManyMembers_agreeOnTheRendezvousAssignment() throws Exception {
        List<String> names = List.of("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7");
        ExecutorService pool = Executors.newFixedThreadPool(names.size());
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> renewals = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            MongoOutboxStore on = i % 2 == 0 ? store : second;
            String name = names.get(i);
            renewals.add(
                    pool.submit(
                            () -> {
                                start.await();
                                for (int r = 0; r < 10; r++) {
                                    on.renew(name, LONG);
                                }
                                return null;
                            }));
        }
        start.countDown();
        for (Future<?> f : renewals) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdownNow();

        Map<String, List<Integer>> expected = Buckets.assign(names);
        List<String> owners = ownersList();
        for (int b = 0; b < Buckets.COUNT; b++) {
            assertThat(owners.get(b))
                    .as("owner of bucket %d", b)
                    .isEqualTo(Buckets.owner(b, names));
        }
        assertThat(store.members())
                .extracting(Member::id, Member::buckets)
                .containsExactlyElementsOf(
                        names.stream()
                                .map(
                                        n ->
                                                org.assertj.core.groups.Tuple.tuple(
                                                        n, expected.get(n).size()))
                                .toList());
        assertThat(owners().getInt64(Members.VERSION).getValue())
                .as("the assignment is written only when it changes")
                .isLessThanOrEqualTo(names.size());
    }

    @Test
    void leave_ofTheLastMember_leavesNoOwner_andItsClaimsTakeOnlyUnkeyedMessages() {
        store.renew("a", LONG);
        store.insert(null, List.of(message("keyed", "order-1"), message("plain", null)));

        store.leave("a");

        assertThat(store.members()).isEmpty();
        assertThat(ownersList()).hasSize(Buckets.COUNT).containsOnlyNulls();
        assertThat(claimAsMember(store, "a", 10))
                .extracting(d -> d.message().id())
                .containsExactly("plain");
    }

    @Test
    void leave_afterACrashBetweenItsTwoWrites_handsTheBucketsOverWhenRepeated() {
        store.renew("a", LONG);
        store.renew("b", LONG);
        // A leave that deleted the member document and crashed before writing the assignment.
        Mongo.client()
                .getDatabase(Mongo.DATABASE)
                .getCollection(
                        collection + MongoOutboxStore.MEMBERS_COLLECTION_SUFFIX, BsonDocument.class)
                .deleteOne(new BsonDocument("_id", new BsonString("a")));
        assertThat(ownersList()).contains("a");

        store.leave("a");

        assertThat(ownersList()).containsOnly("b");
        assertThat(store.members()).extracting(Member::id).containsExactly("b");
    }

    @Test
    void membersOfAnotherCollection_areNotThisOutboxsMembers() {
        store.renew("a", LONG);
        String other = Mongo.freshCollection("members_other");
        MongoOutboxStore elsewhere =
                MongoOutboxStore.builder()
                        .client(Mongo.client())
                        .database(Mongo.DATABASE)
                        .collection(other)
                        .build();

        assertThat(elsewhere.members()).isEmpty();
        assertThat(elsewhere.renew("b", LONG).members()).containsExactly("b");
        assertThat(store.members()).extracting(Member::id).containsExactly("a");
    }

    @Test
    void theOwnersDocumentHoldsEveryBucket() {
        store.renew("a", LONG);
        BsonArray owners = owners().getArray(Members.OWNERS);
        assertThat(owners).hasSize(Buckets.COUNT);
        assertThat(owners).allSatisfy(o -> assertThat(o).isEqualTo(new BsonString("a")));
        assertThat(owners().get(Members.VERSION).isNumber()).isTrue();
    }
}
