package io.outbox4j.examples.quickstart.readme.persistence;

import io.outbox4j.api.Outbox;
import io.outbox4j.examples.quickstart.readme.domain.OrderEvents;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/** The README's enqueue: the order row and its event in one Jdbi transaction, through the port. */
public final class OrderRepository {
    private final Jdbi jdbi;
    private final Outbox<Handle> outbox;

    public OrderRepository(Jdbi jdbi, Outbox<Handle> outbox) {
        this.jdbi = jdbi;
        this.outbox = outbox;
    }

    public void place(String orderId, String customer) {
        jdbi.useTransaction(
                handle -> {
                    handle.createUpdate("insert into orders (id, customer) values (:id, :c)")
                            .bind("id", orderId)
                            .bind("c", customer)
                            .execute();
                    outbox.enqueue(handle, OrderEvents.placed(orderId, customer));
                });
    }
}
