package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox4j.api.MessageLimits;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Configuration is checked when it is given, with messages that name the setting; no server is
 * contacted.
 */
class MongoOutboxStoreBuilderTest {
    /** A client is lazy: it connects on the first operation, which these tests never run. */
    private static MongoClient client;

    @BeforeAll
    static void client() {
        client = MongoClients.create("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100");
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @ParameterizedTest(name = "collection ''{0}'' is rejected: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "''                | collection must not be empty",
                "orders$outbox     | collection must not contain '$', but was 'orders$outbox'",
                "system.outbox     | collection must not start with 'system.' (reserved by MongoDB), but was 'system.outbox'",
            })
    void collection_invalidNameIsRejectedWithTheReason(String name, String message) {
        assertThatThrownBy(() -> MongoOutboxStore.builder().collection(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }

    @Test
    void collection_nulCharacterIsRejected() {
        assertThatThrownBy(() -> MongoOutboxStore.builder().collection("out\0box"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("collection must not contain the NUL character, but was 'out\\0box'");
    }

    @Test
    void collection_over120CharactersIsRejected_120IsAccepted() {
        assertThatThrownBy(() -> MongoOutboxStore.builder().collection("c".repeat(121)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("collection is 121 characters, over the 120 limit");
        MongoOutboxStore store =
                MongoOutboxStore.builder()
                        .client(client)
                        .database("shop")
                        .collection("c".repeat(120))
                        .build();
        assertThat(store.collection().getNamespace().getCollectionName()).hasSize(120);
    }

    @Test
    void collection_dotsAndTheDefaultAreAccepted() {
        assertThat(
                        MongoOutboxStore.builder()
                                .client(client)
                                .database("shop")
                                .collection("orders.outbox")
                                .build()
                                .collection()
                                .getNamespace()
                                .getFullName())
                .isEqualTo("shop.orders.outbox");
        assertThat(
                        MongoOutboxStore.builder()
                                .client(client)
                                .database("shop")
                                .build()
                                .collection()
                                .getNamespace()
                                .getCollectionName())
                .isEqualTo("outbox_message");
    }

    @Test
    void collection_nullIsRejected() {
        assertThatThrownBy(() -> MongoOutboxStore.builder().collection(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("collection must not be null");
    }

    @ParameterizedTest(name = "database ''{0}'' is rejected")
    @CsvSource({"shop.eu", "'shop eu'", "shop$", "shop/eu", "''"})
    void database_invalidNameIsRejected(String name) {
        assertThatThrownBy(() -> MongoOutboxStore.builder().database(name))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("database must not");
    }

    @Test
    void database_over63BytesIsRejected() {
        assertThatThrownBy(() -> MongoOutboxStore.builder().database("d".repeat(64)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("database is 64 bytes, over MongoDB's 63-byte limit");
    }

    @Test
    void build_withoutADatabaseFailsAndSaysWhatToCall() {
        assertThatThrownBy(() -> MongoOutboxStore.builder().build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(
                        "call database(MongoDatabase), or client(MongoClient) and database(String)");
        assertThatThrownBy(() -> MongoOutboxStore.builder().client(client).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("database name missing");
    }

    @Test
    void build_withBothADatabaseAndAClientFails() {
        assertThatThrownBy(
                        () ->
                                MongoOutboxStore.builder()
                                        .client(client)
                                        .database("a")
                                        .database(client.getDatabase("b"))
                                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not both");
    }

    @Test
    void build_fromAMongoDatabaseUsesIt() {
        MongoOutboxStore store =
                MongoOutboxStore.builder().database(client.getDatabase("billing")).build();
        assertThat(store.collection().getNamespace().getFullName())
                .isEqualTo("billing.outbox_message");
    }

    @Test
    void writeConcern_isMajorityByDefault_andReadsGoToThePrimary() {
        MongoOutboxStore store =
                MongoOutboxStore.builder()
                        .database(
                                client.getDatabase("shop")
                                        .withReadPreference(ReadPreference.secondaryPreferred()))
                        .build();
        assertThat(store.collection().getWriteConcern()).isEqualTo(WriteConcern.MAJORITY);
        assertThat(store.collection().getReadPreference()).isEqualTo(ReadPreference.primary());
        assertThat(store.toString()).contains("shop.outbox_message").contains("majority");
    }

    @Test
    void writeConcern_canBeChanged_butNotToUnacknowledged() {
        MongoOutboxStore store =
                MongoOutboxStore.builder()
                        .client(client)
                        .database("shop")
                        .writeConcern(WriteConcern.W1)
                        .build();
        assertThat(store.collection().getWriteConcern()).isEqualTo(WriteConcern.W1);
        assertThatThrownBy(
                        () -> MongoOutboxStore.builder().writeConcern(WriteConcern.UNACKNOWLEDGED))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("writeConcern must be acknowledged");
        assertThatThrownBy(() -> MongoOutboxStore.builder().writeConcern(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("writeConcern must not be null");
    }

    @Test
    void limits_thatAllowDocumentsOver16MiBAreRejected() {
        assertThatThrownBy(
                        () ->
                                MongoOutboxStore.builder()
                                        .limits(
                                                MessageLimits.DEFAULTS.withMaxPayloadBytes(
                                                        16 * 1024 * 1024)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "over MongoDB's 16777216-byte limit; lower maxPayloadBytes (16777216)");
        MongoOutboxStore.builder()
                .limits(MessageLimits.DEFAULTS.withMaxPayloadBytes(8 * 1024 * 1024));
    }

    @Test
    void limits_withIdsTooLongForAReceiptAreRejected() {
        MessageLimits longIds = new MessageLimits(480, 255, 255, 255, 1024, 8, 255, 255);
        assertThatThrownBy(() -> MongoOutboxStore.builder().limits(longIds))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("limits.maxIdLength must be <= 479 for the MongoDB store");
    }

    @Test
    void enqueue_withoutASessionIsRejectedBeforeAnythingIsSent() {
        MongoOutboxStore store = MongoOutboxStore.builder().client(client).database("shop").build();
        io.outbox4j.api.Message m =
                io.outbox4j.api.Message.builder().id("a").topic("t").module("m").build();
        assertThatThrownBy(() -> store.enqueue(null, m))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("transaction must not be null");
        assertThatThrownBy(() -> store.enqueueAll(null, java.util.List.of(m)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("transaction must not be null");
    }

    @Test
    void clock_nullIsRejected() {
        assertThatThrownBy(() -> MongoOutboxStore.builder().clock(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("clock must not be null");
    }
}
