package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Message;
import io.outbox4j.testservices.MongoServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.Document;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MongoOutboxStore#createIndexes()} creates the indexes of the claim path, of per-key order
 * and of the dead-letter listing. mongo-java-server accepts the command but keeps no secondary
 * index (it logs "not yet implemented. ignoring") and has no query planner, so the shapes and the
 * plans are checked only against a real MongoDB ({@code OUTBOX4J_MONGODB_URI}); on the in-JVM
 * server those tests are skipped with that reason.
 */
class MongoIndexTest {
    private MongoOutboxStore store;

    @BeforeEach
    void freshCollection() {
        store = Mongo.store(Mongo.client(), Mongo.freshCollection("indexes"));
    }

    private static void assumeRealMongoDb() {
        Assumptions.assumeFalse(
                Mongo.transactionsUnsupported()
                        .filter(MongoServer.NO_TRANSACTIONS_IN_JVM::equals)
                        .isPresent(),
                "mongo-java-server keeps no secondary indexes and has no query planner");
    }

    @Test
    void createIndexes_isIdempotentAndTheStoreWorksAfterIt() {
        store.createIndexes();
        store.createIndexes();
        store.insert(null, List.of(Message.builder().id("i-1").topic("t").module("m").build()));
        assertThat(
                        store.claim(
                                new ClaimRequest(
                                        "relay",
                                        Instant.now().plusSeconds(1),
                                        Duration.ofMinutes(1),
                                        5)))
                .hasSize(1);
    }

    @Test
    void createIndexes_createsTheClaimKeyAndDeadLetterIndexes() {
        assumeRealMongoDb();
        store.createIndexes();
        Map<String, Document> byName = indexes(store);

        Document claim = byName.get(MongoOutboxStore.CLAIM_INDEX);
        assertThat(claim)
                .as("index %s in %s", MongoOutboxStore.CLAIM_INDEX, byName.keySet())
                .isNotNull();
        assertThat(claim.get("key", Document.class).keySet()).containsExactly("availableAt", "seq");
        assertThat(claim.get("partialFilterExpression", Document.class))
                .isEqualTo(
                        new Document("availableAt", new Document("$exists", true))
                                .append("parked", false));
        Document key = byName.get(MongoOutboxStore.KEY_INDEX);
        assertThat(key.get("key", Document.class).keySet()).containsExactly("key", "seq");
        assertThat(key.get("partialFilterExpression", Document.class))
                .isEqualTo(new Document("key", new Document("$exists", true)));
        Document dead = byName.get(MongoOutboxStore.DEAD_INDEX);
        assertThat(dead.get("key", Document.class).keySet()).containsExactly("deadAt", "seq");
        assertThat(byName.keySet())
                .as("nothing else to maintain on every lease")
                .containsExactlyInAnyOrder(
                        "_id_",
                        MongoOutboxStore.CLAIM_INDEX,
                        MongoOutboxStore.KEY_INDEX,
                        MongoOutboxStore.DEAD_INDEX);
    }

    @Test
    void createIndexes_withDeadLettersThatDoNotBlock_leavesThemOutOfTheKeyIndex() {
        assumeRealMongoDb();
        MongoOutboxStore notBlocking =
                MongoOutboxStore.builder()
                        .client(Mongo.client())
                        .database(Mongo.DATABASE)
                        .collection(store.collection().getNamespace().getCollectionName())
                        .deadLettersBlockTheirKey(false)
                        .build();
        notBlocking.createIndexes();
        Document key = indexes(notBlocking).get(MongoOutboxStore.LIVE_KEY_INDEX);
        assertThat(key.get("partialFilterExpression", Document.class))
                .isEqualTo(
                        new Document("key", new Document("$exists", true))
                                .append("availableAt", new Document("$exists", true)));
    }

    @Test
    void keyRangeQuery_isServedByTheKeyIndex() {
        assumeRealMongoDb();
        store.createIndexes();
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            messages.add(
                    Message.builder()
                            .id("k-" + i)
                            .key("k" + (i % 10))
                            .topic("t")
                            .module("m")
                            .build());
        }
        store.insert(null, messages);
        Document plan =
                store.collection()
                        .find(
                                Document.parse(
                                        "{$or: [{key: 'k1', seq: {$lte: 9.0E18}},"
                                                + " {key: 'k2', seq: {$lte: 9.0E18}}]}"))
                        .sort(
                                new BsonDocument("key", new BsonInt32(1))
                                        .append("seq", new BsonInt32(1)))
                        .limit(20)
                        .explain(Document.class);
        String winning =
                plan.get("queryPlanner", Document.class)
                        .get("winningPlan", Document.class)
                        .toJson();
        assertThat(winning)
                .contains("IXSCAN")
                .contains(MongoOutboxStore.KEY_INDEX)
                .doesNotContain("COLLSCAN");
    }

    private static Map<String, Document> indexes(MongoOutboxStore store) {
        return store.collection().listIndexes(Document.class).into(new ArrayList<>()).stream()
                .collect(Collectors.toMap(d -> d.getString("name"), d -> d));
    }

    @Test
    void claimQuery_isServedByTheClaimIndexWithoutASort() {
        assumeRealMongoDb();
        store.createIndexes();
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            messages.add(Message.builder().id("p-" + i).topic("t").module("m").build());
        }
        store.insert(null, messages);
        BsonDocument filter = Claimer.claimable(Long.MAX_VALUE);
        Document plan =
                store.collection()
                        .find(filter)
                        .projection(new BsonDocument("_id", new BsonInt32(1)))
                        .sort(
                                new BsonDocument("availableAt", new BsonInt32(1))
                                        .append("seq", new BsonInt32(1)))
                        .limit(20)
                        .explain(Document.class);
        String winning =
                plan.get("queryPlanner", Document.class)
                        .get("winningPlan", Document.class)
                        .toJson();
        assertThat(winning)
                .contains("IXSCAN")
                .contains(MongoOutboxStore.CLAIM_INDEX)
                .doesNotContain("\"SORT\"");
    }

    @Test
    void memberClaimQuery_isServedByTheClaimIndexWithoutASort() {
        assumeRealMongoDb();
        store.createIndexes();
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            messages.add(
                    Message.builder()
                            .id("b-" + i)
                            .key(i % 3 == 0 ? null : "k" + (i % 17))
                            .topic("t")
                            .module("m")
                            .build());
        }
        store.insert(null, messages);
        BsonDocument filter =
                Claimer.inBuckets(Claimer.claimable(Long.MAX_VALUE), java.util.Set.of(1, 7, 200));
        Document plan =
                store.collection()
                        .find(filter)
                        .projection(new BsonDocument("_id", new BsonInt32(1)))
                        .sort(
                                new BsonDocument("availableAt", new BsonInt32(1))
                                        .append("seq", new BsonInt32(1)))
                        .limit(20)
                        .explain(Document.class);
        String winning =
                plan.get("queryPlanner", Document.class)
                        .get("winningPlan", Document.class)
                        .toJson();
        assertThat(winning)
                .contains("IXSCAN")
                .contains(MongoOutboxStore.CLAIM_INDEX)
                .doesNotContain("\"SORT\"");
    }
}
