package io.outbox4j.cli;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The outbox of a small shop: order events that publish, and payment events whose broker refuses
 * them for good, so a real relay run turns them into dead letters. Payloads and header values carry
 * markers that the command must never print unless asked.
 */
final class ShopOutbox {
    static final String SECRET_PAYLOAD = "card-number-4111111111111111";
    static final String SECRET_HEADER_VALUE = "tenant-secret-7f3a";
    static final String REFUSAL = "payment gateway refused the event: account closed";

    /** Publishes everything except, while {@link #refusePayments} is set, the payments topic. */
    static final class Broker implements Publisher {
        volatile boolean refusePayments = true;
        final List<String> published = Collections.synchronizedList(new ArrayList<>());

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            List<PublishOutcome> outcomes = new ArrayList<>();
            for (Message m : messages) {
                if (refusePayments && m.topic().equals(PAYMENTS)) {
                    outcomes.add(PublishOutcome.failed(new PermanentFailureException(REFUSAL)));
                } else {
                    published.add(m.id());
                    outcomes.add(PublishOutcome.published());
                }
            }
            return outcomes;
        }
    }

    static final String ORDERS = "shop.orders";
    static final String PAYMENTS = "shop.payments";

    /**
     * Three orders (published), and three payments: pay-1 and pay-3 are refused (dead letters),
     * pay-2 shares pay-1's key and waits behind it.
     */
    static List<Message> messages(String prefix) {
        List<Message> out = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            out.add(message(prefix + "order-" + i, ORDERS, "order-" + i));
        }
        out.add(message(prefix + "pay-1", PAYMENTS, "card-1"));
        out.add(message(prefix + "pay-2", PAYMENTS, "card-1"));
        out.add(message(prefix + "pay-3", PAYMENTS, "card-3"));
        return out;
    }

    private static Message message(String id, String topic, String key) {
        return Message.builder()
                .id(id)
                .topic(topic)
                .key(key)
                .module("shop")
                .contentType("application/json")
                .payload("{\"id\":\"" + id + "\",\"secret\":\"" + SECRET_PAYLOAD + "\"}")
                .header("tenant", SECRET_HEADER_VALUE)
                .header("trace-id", "trace-" + id)
                .occurredAt(Instant.parse("2026-12-01T10:00:00Z"))
                .build();
    }

    /** Runs batches until one claims nothing; returns how many messages were dead-lettered. */
    static int relayUntilIdle(OutboxStore store, Broker broker) {
        int dead = 0;
        try (Relay relay =
                Relay.builder(store, broker).owner("cli-test-relay").batchSize(10).build()) {
            for (int i = 0; i < 20; i++) {
                Relay.Result r = relay.runOnce();
                dead += r.deadLettered();
                if (r.claimed() == 0) {
                    return dead;
                }
            }
        }
        throw new AssertionError("the relay did not become idle in 20 batches");
    }

    private ShopOutbox() {}
}
