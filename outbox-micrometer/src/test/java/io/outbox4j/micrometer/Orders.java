package io.outbox4j.micrometer;

import io.outbox4j.api.Message;

/** The messages the tests enqueue and publish: a shop's order events. */
final class Orders {
    private Orders() {}

    /**
     * An order event: topic {@code orders}, module {@code shop}, payload {@code {}}, no key; the
     * test adds or changes what it needs.
     *
     * @param id the message id
     * @return the builder
     */
    static Message.Builder order(String id) {
        return Message.builder().id(id).topic("orders").module("shop").payload("{}");
    }
}
