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
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.Document;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MongoOutboxStore#createIndexes()} creates the index of the claim path. mongo-java-server
 * accepts the command but keeps no secondary index (it logs "not yet implemented. ignoring") and
 * has no query planner, so the shape and the plan are checked only against a real MongoDB; there
 * the tests are skipped with that reason.
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
    void createIndexes_createsThePartialClaimIndex() {
        assumeRealMongoDb();
        store.createIndexes();
        Map<String, Document> byName =
                store.collection().listIndexes(Document.class).into(new ArrayList<>()).stream()
                        .collect(Collectors.toMap(d -> d.getString("name"), d -> d));

        Document claim = byName.get(MongoOutboxStore.CLAIM_INDEX);
        assertThat(claim)
                .as("index %s in %s", MongoOutboxStore.CLAIM_INDEX, byName.keySet())
                .isNotNull();
        assertThat(claim.get("key", Document.class).keySet()).containsExactly("availableAt", "seq");
        assertThat(claim.get("partialFilterExpression", Document.class).toJson())
                .isEqualTo(new Document("availableAt", new Document("$exists", true)).toJson());
        assertThat(byName.keySet())
                .as("the claim index and _id's own, nothing else to maintain on every lease")
                .containsExactlyInAnyOrder("_id_", MongoOutboxStore.CLAIM_INDEX);
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
        BsonDocument filter =
                new BsonDocument(
                        "availableAt",
                        new BsonDocument("$exists", BsonBoolean.TRUE)
                                .append("$lte", new BsonInt64(Long.MAX_VALUE)));
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
