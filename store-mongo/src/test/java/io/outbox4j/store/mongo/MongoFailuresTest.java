package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.StoreUnavailableException;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Failures of the driver reach the caller as the library's {@link OutboxException}, naming the
 * collection and the operation, with the driver's exception as the cause.
 */
class MongoFailuresTest {
    private static MongoClient unreachable;
    private static MongoOutboxStore store;

    @BeforeAll
    static void storeOnAServerThatIsNotThere() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        unreachable =
                MongoClients.create(
                        MongoClientSettings.builder()
                                .applyConnectionString(
                                        new ConnectionString("mongodb://127.0.0.1:" + port))
                                .applyToClusterSettings(
                                        c -> c.serverSelectionTimeout(200, TimeUnit.MILLISECONDS))
                                .build());
        store = MongoOutboxStore.builder().client(unreachable).database("outbox4j_nowhere").build();
    }

    @AfterAll
    static void close() {
        unreachable.close();
    }

    @Test
    void claim_ofAnUnreachableServer_throwsOutboxExceptionWithTheDriversCause() {
        assertThatThrownBy(
                        () ->
                                store.claim(
                                        new ClaimRequest(
                                                "relay", Instant.now(), Duration.ofMinutes(1), 5)))
                .isInstanceOf(StoreUnavailableException.class)
                .hasMessageStartingWith(
                        "MongoDB outbox outbox4j_nowhere.outbox_message: claim failed: ")
                .hasCauseInstanceOf(MongoException.class);
    }

    @Test
    void everyOtherOperation_throwsOutboxExceptionToo() {
        String receipt = "0123456789abcdef0123456789abcdef.m-1";
        assertThatThrownBy(() -> store.complete(new Completion("relay", List.of(receipt))))
                .isInstanceOf(OutboxException.class)
                .hasMessageContaining("complete failed")
                .hasCauseInstanceOf(MongoException.class);
        assertThatThrownBy(
                        () ->
                                store.insert(
                                        null,
                                        List.of(
                                                Message.builder()
                                                        .id("m-1")
                                                        .topic("t")
                                                        .module("m")
                                                        .build())))
                .isInstanceOf(OutboxException.class)
                .hasMessageContaining("enqueue failed")
                .hasCauseInstanceOf(MongoException.class);
        assertThatThrownBy(() -> store.statistics(Instant.now()))
                .isInstanceOf(OutboxException.class)
                .hasCauseInstanceOf(MongoException.class);
        assertThatThrownBy(() -> store.deadLetters(DeadLetterQuery.all()))
                .isInstanceOf(OutboxException.class)
                .hasCauseInstanceOf(MongoException.class);
        assertThatThrownBy(store::createIndexes)
                .isInstanceOf(OutboxException.class)
                .hasCauseInstanceOf(MongoException.class);
    }
}
