package io.outbox4j.tck.example.domain;

import io.outbox4j.api.Message;

/**
 * Domain code of the architecture example: it builds outbox messages through the API and nothing
 * else.
 */
public final class OrderEvents {
    private OrderEvents() {}

    /**
     * The event for a placed order.
     *
     * @param orderId the order
     * @return the message to enqueue in the order's transaction
     */
    public static Message orderPlaced(String orderId) {
        return Message.builder()
                .id("order-placed-" + orderId)
                .topic("orders.placed")
                .module("orders")
                .contentType("application/json")
                .payload("{\"orderId\":\"" + orderId + "\"}")
                .build();
    }
}
