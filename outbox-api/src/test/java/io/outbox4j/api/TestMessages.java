package io.outbox4j.api;

/** Messages for the API's tests. */
final class TestMessages {
    private TestMessages() {}

    /** A builder with every required field set: id, topic, module and payload. */
    static Message.Builder valid() {
        return Message.builder()
                .id("order-1")
                .topic("orders.created")
                .module("orders")
                .payload("{}");
    }
}
