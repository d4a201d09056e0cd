package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.FindIterable;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Message;
import io.outbox4j.testservices.MongoServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
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
        load200(i -> Message.builder().id("k-" + i).key("k" + (i % 10)).topic("t").module("m"));
        String winning =
                winningPlan(
                        store.collection()
                                .find(
                                        Document.parse(
                                                "{$or: [{key: 'k1', seq: {$lte: 9.0E18}},"
                                                        + " {key: 'k2', seq: {$lte: 9.0E18}}]}")),
                        "key");
        assertThat(winning)
                .contains("IXSCAN")
                .contains(MongoOutboxStore.KEY_INDEX)
                .doesNotContain("COLLSCAN");
    }

    /** Creates the indexes and inserts 200 messages, built by {@code message} from their number. */
    private void load200(IntFunction<Message.Builder> message) {
        store.createIndexes();
        store.insert(
                null, IntStream.range(0, 200).mapToObj(i -> message.apply(i).build()).toList());
    }

    /**
     * The winning plan, as JSON, of the first 20 results of {@code find} sorted by {@code field}
     * then {@code seq}.
     */
    private static String winningPlan(FindIterable<BsonDocument> find, String field) {
        return find.sort(new BsonDocument(field, new BsonInt32(1)).append("seq", new BsonInt32(1)))
                .limit(20)
                .explain(Document.class)
                .get("queryPlanner", Document.class)
                .get("winningPlan", Document.class)
                .toJson();
    }

    /**
     * Asserts that the ids of the first 20 claimable documents that {@code filter} selects, in
     * claim order, are read through the claim index, with no sort stage.
     */
    private void assertServedByTheClaimIndexWithoutASort(BsonDocument filter) {
        String winning =
                winningPlan(
                        store.collection()
                                .find(filter)
                                .projection(new BsonDocument("_id", new BsonInt32(1))),
                        "availableAt");
        assertThat(winning)
                .contains("IXSCAN")
                .contains(MongoOutboxStore.CLAIM_INDEX)
                .doesNotContain("\"SORT\"");
    }

    private static Map<String, Document> indexes(MongoOutboxStore store) {
        return store.collection().listIndexes(Document.class).into(new ArrayList<>()).stream()
                .collect(Collectors.toMap(d -> d.getString("name"), d -> d));
    }

    @Test
    void claimQuery_isServedByTheClaimIndexWithoutASort() {
        assumeRealMongoDb();
        load200(i -> Message.builder().id("p-" + i).topic("t").module("m"));
        assertServedByTheClaimIndexWithoutASort(Claimer.claimable(Long.MAX_VALUE));
    }

    @Test
    void memberClaimQuery_isServedByTheClaimIndexWithoutASort() {
        assumeRealMongoDb();
        load200(
                i ->
                        Message.builder()
                                .id("b-" + i)
                                .key(i % 3 == 0 ? null : "k" + (i % 17))
                                .topic("t")
                                .module("m"));
        assertServedByTheClaimIndexWithoutASort(
                Claimer.inBuckets(Claimer.claimable(Long.MAX_VALUE), java.util.Set.of(1, 7, 200)));
    }
}
