package io.outbox4j.examples.quickstart;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;

/** Where orders and their events are written, in one transaction. */
interface StoreBackend extends AutoCloseable {
    /** The dispatch side the relays drive. */
    OutboxStore store();

    /** Inserts the order row and enqueues its event in one transaction, then commits. */
    void placeOrder(Order order, Message event);

    /** Counts the orders of this run committed, to check the business side against the events. */
    long orderCount(String idPrefix);

    /** Says which database this is, for the summary. */
    String describe();

    @Override
    void close();

    /** One order of the order service. */
    record Order(String id, String customer, long amount) {}
}
