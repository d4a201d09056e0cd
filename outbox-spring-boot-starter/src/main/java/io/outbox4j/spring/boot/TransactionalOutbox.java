package io.outbox4j.spring.boot;

import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import java.util.List;

/**
 * The write side of the outbox in a Spring application: inserts messages in the Spring-managed
 * transaction that is active on the calling thread, so they commit or roll back with the business
 * change. Works with any transaction manager that binds a connection of the outbox's {@code
 * DataSource} ({@code DataSourceTransactionManager}, {@code JpaTransactionManager}, jOOQ over
 * Spring transactions).
 *
 * <pre>{@code
 * @Transactional
 * public void placeOrder(Order order) {
 *     orders.save(order);
 *     outbox.enqueue(Message.builder().id(order.id()).topic("orders").key(order.customerId())
 *             .module("orders").payload(json(order)).build());
 * }
 * }</pre>
 *
 * After the transaction commits, the application's relay (if it runs one) is woken so the messages
 * are published at once rather than at its next poll.
 */
public interface TransactionalOutbox {
    /**
     * Inserts one message in the current transaction.
     *
     * @param message the message
     * @throws org.springframework.transaction.IllegalTransactionStateException if no transaction is
     *     active, it is read-only, or it holds no connection of the outbox's {@code DataSource}
     * @throws DuplicateMessageException if a message with the same id is already in the outbox
     */
    void enqueue(Message message);

    /**
     * Inserts several messages in the current transaction, in one round trip where the store can.
     *
     * @param messages the messages, in order
     * @throws org.springframework.transaction.IllegalTransactionStateException if no transaction is
     *     active, it is read-only, or it holds no connection of the outbox's {@code DataSource}
     * @throws DuplicateMessageException if an id is already in the outbox or appears twice
     */
    void enqueueAll(List<Message> messages);
}
