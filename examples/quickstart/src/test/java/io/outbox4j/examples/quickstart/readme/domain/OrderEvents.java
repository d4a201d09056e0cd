package io.outbox4j.examples.quickstart.readme.domain;

import io.outbox4j.api.Message;

/** The README's event builder: domain code that knows only the api. */
public final class OrderEvents {
    private OrderEvents() {}

    /** The event of a placed order, keyed by customer. */
    public static Message placed(String orderId, String customer) {
        return Message.builder()
                .id(orderId)
                .topic("orders")
                .key(customer)
                .module("orders")
                .contentType("application/json")
                .payload("{\"orderId\":\"" + orderId + "\"}")
                .build();
    }
}
