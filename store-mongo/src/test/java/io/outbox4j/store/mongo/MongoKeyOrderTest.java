package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How the MongoDB store keeps per-key order in its documents: parking, the {@code parkedBehind}
 * mark, unparking on removal (and its bound), and the crash-safe order of writes without
 * multi-document transactions.
 */
class MongoKeyOrderTest {
    private static final Instant ENQUEUED = Instant.parse("2030-01-02T03:04:05.123456Z");
    private static final Instant NOW = ENQUEUED.plusSeconds(1);
    private static final Duration LEASE = Duration.ofMinutes(5);

    private MongoOutboxStore store;
    private String collection;

    @BeforeEach
    void freshCollection() {
        collection = Mongo.freshCollection("keys");
        store = build(true);
        store.createIndexes();
    }

    private MongoOutboxStore build(boolean deadLettersBlock) {
        return MongoOutboxStore.builder()
                .client(Mongo.client())
                .database(Mongo.DATABASE)
                .collection(collection)
                .clock(Clock.fixed(ENQUEUED, ZoneOffset.UTC))
                .deadLettersBlockTheirKey(deadLettersBlock)
                .build();
    }

    private static Message keyed(String id) {
        return Message.builder().id(id).key("K").topic("orders").module("shop").build();
    }

    private List<Delivery> claim(MongoOutboxStore on, String owner, int limit) {
        return on.claim(new ClaimRequest(owner, NOW, LEASE, limit));
    }

    private List<String> ids(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> d.message().id()).toList();
    }

    private BsonDocument stored(String id) {
        return store.collection().find(new BsonDocument("_id", new BsonString(id))).first();
    }

    private boolean parked(String id) {
        return stored(id).getBoolean("parked").getValue();
    }

    private boolean marked(String id) {
        return stored(id).containsKey("parkedBehind");
    }

    @Test
    void
            claim_parksTheFollowerOfALeasedMessage_marksTheMessageItWaitsBehind_andCompleteUnparksIt() {
        store.insert(
                null,
                List.of(
                        keyed("k-1"),
                        keyed("k-2"),
                        Message.builder().id("u").topic("audit").module("shop").build()));
        List<Delivery> first = claim(store, "relay-a", 1);
        assertThat(ids(first)).containsExactly("k-1");

        assertThat(ids(claim(store, "relay-b", 10)))
                .as("only the unkeyed message; k-2 waits behind k-1")
                .containsExactly("u");
        assertThat(parked("k-2")).isTrue();
        assertThat(marked("k-1")).as("k-1 carries the mark: k-2 waits behind it").isTrue();
        assertThat(claim(store, "relay-c", 10)).isEmpty();

        assertThat(store.complete(new Completion("relay-a", List.of(first.get(0).receipt()))))
                .isEmpty();
        assertThat(parked("k-2")).as("completing k-1 unparks its key").isFalse();
        assertThat(ids(claim(store, "relay-c", 10))).containsExactly("k-2");
    }

    @Test
    void removal_unparksBeforeItDeletes_soACrashInBetweenOnlyUnparksWhatTheNextClaimParksAgain() {
        store.insert(null, List.of(keyed("k-1"), keyed("k-2"), keyed("k-3")));
        List<Delivery> first = claim(store, "relay-a", 1);
        assertThat(claim(store, "relay-b", 10)).isEmpty();
        assertThat(parked("k-2") && parked("k-3")).isTrue();

        // A completion of k-1 that crashed after unparking its key, before deleting k-1.
        store.keyOrder().unpark(List.of("K"));
        assertThat(parked("k-2") || parked("k-3")).isFalse();

        assertThat(claim(store, "relay-b", 10))
                .as("k-1 is still leased: nothing of its key may be handed out")
                .isEmpty();
        assertThat(parked("k-2") && parked("k-3")).as("the next claim parked them again").isTrue();
        assertThat(marked("k-1")).isTrue();

        store.complete(new Completion("relay-a", List.of(first.get(0).receipt())));
        assertThat(ids(claim(store, "relay-b", 10))).containsExactly("k-2", "k-3");
    }

    @Test
    void removal_unparksAtMostTheFirstThousandOfAKey_marksTheLastOneUnparked_andTheRestFollow() {
        int followers = KeyOrder.UNPARK_LIMIT + 100;
        List<Message> all = new ArrayList<>();
        for (int i = 0; i <= followers; i++) {
            all.add(keyed(String.format("k-%05d", i)));
        }
        for (int from = 0; from < all.size(); from += 500) {
            store.insert(null, all.subList(from, Math.min(all.size(), from + 500)));
        }
        List<Delivery> head = claim(store, "relay-a", 1);
        assertThat(ids(head)).containsExactly("k-00000");
        assertThat(claim(store, "relay-b", 10))
                .as("one claim reads pages of 10, 20, ... up to 1000 rows and parks them all")
                .isEmpty();
        assertThat(store.collection().countDocuments(BsonDocument.parse("{parked: true}")))
                .isEqualTo(followers);

        store.complete(new Completion("relay-a", List.of(head.get(0).receipt())));
        assertThat(store.collection().countDocuments(BsonDocument.parse("{parked: false}")))
                .as("the first %d followers are unparked", KeyOrder.UNPARK_LIMIT)
                .isEqualTo(KeyOrder.UNPARK_LIMIT);
        assertThat(parked(String.format("k-%05d", KeyOrder.UNPARK_LIMIT))).isFalse();
        assertThat(parked(String.format("k-%05d", KeyOrder.UNPARK_LIMIT + 1))).isTrue();
        assertThat(marked(String.format("k-%05d", KeyOrder.UNPARK_LIMIT)))
                .as("the last one unparked holds the rest back and carries the mark")
                .isTrue();

        List<String> handedOut = new ArrayList<>();
        for (int round = 0; round < 20 && handedOut.size() < followers; round++) {
            List<Delivery> got = claim(store, "relay-c", 300);
            got.forEach(d -> handedOut.add(d.message().id()));
            if (!got.isEmpty()) {
                store.complete(
                        new Completion("relay-c", got.stream().map(Delivery::receipt).toList()));
            }
        }
        assertThat(handedOut).hasSize(followers).isSorted();
        assertThat(store.collection().countDocuments()).isZero();
    }

    @Test
    void claim_withMoreKeysInAPageThanOneQueryAsksAbout_keepsEveryKeyInOrder() {
        int keys = KeyOrder.MAX_KEYS_PER_QUERY + 50;
        List<Message> all = new ArrayList<>();
        for (int n = 1; n <= 2; n++) {
            for (int k = 0; k < keys; k++) {
                all.add(
                        Message.builder()
                                .id(String.format("k%03d-%d", k, n))
                                .key(String.format("k%03d", k))
                                .topic("orders")
                                .module("shop")
                                .build());
            }
        }
        store.insert(null, all);
        List<Delivery> firsts = claim(store, "relay-a", keys);
        assertThat(ids(firsts)).allMatch(id -> id.endsWith("-1")).hasSize(keys);

        assertThat(claim(store, "relay-b", 2 * keys))
                .as("every second message waits behind the first of its key")
                .isEmpty();
        assertThat(store.collection().countDocuments(BsonDocument.parse("{parked: true}")))
                .isEqualTo(keys);

        store.complete(new Completion("relay-a", firsts.stream().map(Delivery::receipt).toList()));
        assertThat(ids(claim(store, "relay-b", 2 * keys)))
                .hasSize(keys)
                .allMatch(id -> id.endsWith("-2"));
    }

    @Test
    void deadLetter_whenDeadLettersDoNotBlock_unparksTheKeyAtOnce() {
        MongoOutboxStore notBlocking = build(false);
        notBlocking.createIndexes();
        notBlocking.insert(null, List.of(keyed("k-1"), keyed("k-2")));
        List<Delivery> first = claim(notBlocking, "relay-a", 1);
        assertThat(claim(notBlocking, "relay-b", 10)).isEmpty();
        assertThat(parked("k-2")).isTrue();

        assertThat(
                        notBlocking.deadLetter(
                                new DeadLetter("relay-a", first.get(0).receipt(), "poison", NOW)))
                .isTrue();
        assertThat(parked("k-2")).isFalse();
        assertThat(ids(claim(notBlocking, "relay-b", 10))).containsExactly("k-2");
    }

    @Test
    void deadLetter_blocksTheKeyByDefault_andDiscardingItUnparksTheKey() {
        store.insert(null, List.of(keyed("k-1"), keyed("k-2")));
        List<Delivery> first = claim(store, "relay-a", 1);
        store.deadLetter(new DeadLetter("relay-a", first.get(0).receipt(), "poison", NOW));
        assertThat(claim(store, "relay-b", 10)).isEmpty();
        assertThat(parked("k-2")).isTrue();
        assertThat(store.statistics(NOW).blockedKeys()).isEqualTo(1);

        assertThat(store.discard(List.of("k-1"))).isEqualTo(1);
        assertThat(parked("k-2")).isFalse();
        assertThat(ids(claim(store, "relay-b", 10))).containsExactly("k-2");
        assertThat(store.statistics(NOW).blockedKeys()).isZero();
    }

    @Test
    void keysAreComparedAsMongoDbSortsThem_byCodePoint() {
        // U+FF5E sorts after U+1F600 in UTF-16 units (Java's compareTo) but before it in UTF-8.
        String bmp = "\uFF5E";
        String astral = new String(Character.toChars(0x1F600));
        assertThat(bmp.compareTo(astral)).isPositive();
        assertThat(KeyOrder.mongoOrder(bmp, astral)).isNegative();
        assertThat(KeyOrder.mongoOrder("a", "ab")).isNegative();
        assertThat(KeyOrder.mongoOrder("b", "ab")).isPositive();
        assertThat(KeyOrder.mongoOrder(astral, astral)).isZero();
    }
}
