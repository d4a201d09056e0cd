package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Message;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/**
 * The relay drives the MongoDB store end to end: publish, retry after a failure (the later orders
 * of the same customer wait for it), dead-letter a poison message.
 */
class MongoRelayEndToEndTest {
    @Test
    void
            relayPublishesEverything_retriesTransientFailuresKeepingEachKeyInOrder_andDeadLettersThePoisonMessage() {
        MongoOutboxStore store = Mongo.indexedStore(Mongo.freshCollection("relay"));
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            String id = (i % 10 == 3 ? "flaky-" : "ok-") + i;
            messages.add(
                    Message.builder()
                            .id(id)
                            .key("customer-" + (i % 7))
                            .topic("orders")
                            .module("shop")
                            .payload("order " + i)
                            .build());
        }
        messages.add(
                Message.builder()
                        .id("poison")
                        .topic("orders")
                        .module("shop")
                        .payload("bad")
                        .build());
        Mongo.enqueueCommitted(store, Mongo.client(), messages);

        Map<String, AtomicInteger> sends = new ConcurrentHashMap<>();
        List<String> published = new ArrayList<>();
        Publisher publisher =
                Publisher.perMessage(
                        m -> {
                            int attempt =
                                    sends.computeIfAbsent(m.id(), k -> new AtomicInteger())
                                            .incrementAndGet();
                            if (m.id().equals("poison")) {
                                throw new PermanentFailureException(
                                        "schema rejected by the broker");
                            }
                            if (m.id().startsWith("flaky-") && attempt == 1) {
                                throw new IllegalStateException("broker briefly unavailable");
                            }
                            synchronized (published) {
                                published.add(m.id());
                            }
                        });

        try (Relay relay =
                Relay.builder(store, publisher)
                        .owner("e2e")
                        .batchSize(50)
                        .workers(2)
                        .deliveryTimeout(Duration.ofSeconds(5))
                        .maxAttempts(3)
                        .backoff(Backoff.fixed(Duration.ZERO))
                        .build()) {
            for (int round = 0; round < 20 && relay.runOnce().claimed() > 0; round++) {
                // drain
            }
        }

        assertThat(published).hasSize(120).doesNotHaveDuplicates();
        Map<String, List<Integer>> byKey = new HashMap<>();
        for (String id : published) {
            int i = Integer.parseInt(id.substring(id.indexOf('-') + 1));
            byKey.computeIfAbsent("customer-" + (i % 7), k -> new ArrayList<>()).add(i);
        }
        assertThat(byKey.values())
                .as("each customer's orders are published in enqueue order, retries included")
                .allSatisfy(orders -> assertThat(orders).isSorted());
        assertThat(sends.get("flaky-3").get()).isEqualTo(2);
        assertThat(sends.get("poison").get()).as("a permanent failure is not retried").isEqualTo(1);
        assertThat(store.collection().countDocuments())
                .as("only the dead letter is left")
                .isEqualTo(1);
        BsonDocument poison =
                store.collection().find(new BsonDocument("_id", new BsonString("poison"))).first();
        assertThat(poison.getString("deadReason").getValue())
                .contains("schema rejected by the broker");
        assertThat(poison.containsKey("availableAt")).isFalse();
    }
}
