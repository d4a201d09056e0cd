package io.outbox4j.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox4j.store.mongo.MongoOutboxStore;
import io.outbox4j.testservices.MongoServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The command against a MongoDB URI. The in-JVM server (no sessions, so nothing can be enqueued in
 * a transaction) proves the connection, the database option and the admin calls on an empty outbox;
 * the full session with dead letters runs where {@code OUTBOX4J_MONGODB_URI} names a replica set.
 */
class MongoCliTest {
    private static final String DATABASE = "outbox_cli_mongo";

    private static CliRun cli(String table, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(
                List.of(
                        "--store",
                        MongoServer.shared().connectionString(),
                        "--database",
                        DATABASE,
                        "--table",
                        table));
        return CliRun.of(all, Map.of());
    }

    @Test
    void anEmptyOutbox_hasZeroCountsAndNoDeadLetters() {
        CliRun stats = cli("outbox_empty", "stats");
        assertThat(stats.exit()).as(stats.err()).isZero();
        assertThat(stats.out())
                .contains("MongoDB mongodb://")
                .contains("database " + DATABASE)
                .containsPattern("(?m)^\\(all topics\\) +0 +0 +0 +0 +-$");
        CliRun list = cli("outbox_empty", "dead-letters", "list");
        assertThat(list.out()).contains("No dead letters.");
        CliRun replay = cli("outbox_empty", "dead-letters", "replay", "nope");
        assertThat(replay.exit()).isEqualTo(OutboxCli.NOT_FOUND);
        assertThat(replay.out()).contains("Replayed 0 of 1 dead letter.");
    }

    @Test
    void aUriWithoutADatabase_andNoDatabaseOption_isABadArgument() {
        CliRun r = CliRun.of(List.of("stats", "--store", "mongodb://127.0.0.1:1"), Map.of());
        assertThat(r.exit()).isEqualTo(OutboxCli.USAGE);
        assertThat(r.err()).contains("the MongoDB database is not set");
    }

    @Test
    void operatorSession_onAReplicaSet_replaysADeadLetterThatIsPublishedAfterwards() {
        MongoServer server = MongoServer.shared();
        Assumptions.assumeTrue(
                server.supportsTransactions(),
                () -> "needs a replica set: " + server.transactionsUnsupportedReason().orElse(""));
        String table =
                "outbox_operatorSession_onAReplicaSet_replaysADeadLetterThatIsPublishedAfterwards";
        try (MongoClient client = MongoClients.create(server.connectionString())) {
            client.getDatabase(DATABASE).getCollection(table).drop();
            MongoOutboxStore store =
                    MongoOutboxStore.builder()
                            .client(client)
                            .database(DATABASE)
                            .collection(table)
                            .build();
            store.createIndexes();
            try (ClientSession session = client.startSession()) {
                session.withTransaction(
                        () -> {
                            store.enqueueAll(session, ShopOutbox.messages(""));
                            return null;
                        });
            }
            ShopOutbox.Broker broker = new ShopOutbox.Broker();
            assertThat(ShopOutbox.relayUntilIdle(store, broker)).isEqualTo(2);

            assertThat(cli(table, "dead-letters", "list").out())
                    .contains("pay-1")
                    .contains("pay-3");
            broker.refusePayments = false;
            assertThat(cli(table, "dead-letters", "replay", "pay-1").exit()).isZero();
            ShopOutbox.relayUntilIdle(store, broker);
            assertThat(broker.published).containsSubsequence("pay-1", "pay-2");
        }
    }
}
