package io.outbox4j.examples.springboot;

import io.outbox4j.api.Message;
import io.outbox4j.spring.boot.TransactionalOutbox;
import java.math.BigDecimal;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import tools.jackson.databind.json.JsonMapper;

/** Places orders: the order row and its event commit together, or neither does. */
@Service
public class OrderService {
    private final JdbcTemplate jdbc;
    private final TransactionalOutbox outbox;
    private final JsonMapper json;
    private final String topic;

    OrderService(
            JdbcTemplate jdbc,
            TransactionalOutbox outbox,
            JsonMapper json,
            @Value("${example.topic}") String topic) {
        this.jdbc = jdbc;
        this.outbox = outbox;
        this.json = json;
        this.topic = topic;
    }

    /**
     * Places an order.
     *
     * @param customer who orders
     * @param amount how much
     * @return the new order's id
     */
    // tag::place-order[]
    @Transactional
    public String place(String customer, BigDecimal amount) {
        String id = insertOrder(customer, amount); // the business change
        outbox.enqueue( // its event, in the same transaction
                Message.builder()
                        .id(id) // the consumers' idempotency key
                        .topic(topic)
                        .key(customer) // one customer's events stay in order
                        .module("orders")
                        .contentType("application/json")
                        .payload(orderPlaced(id, customer, amount))
                        .build());
        return id;
    }

    // end::place-order[]

    private String insertOrder(String customer, BigDecimal amount) {
        if (amount.signum() <= 0) {
            throw new IllegalArgumentException("amount must be positive, but was " + amount);
        }
        String id = UUID.randomUUID().toString();
        jdbc.update(
                "INSERT INTO orders (id, customer, amount, placed_at) VALUES (?, ?, ?, ?)",
                id,
                customer,
                amount,
                Timestamp.from(Instant.now()));
        return id;
    }

    private byte[] orderPlaced(String id, String customer, BigDecimal amount) {
        return json.writeValueAsBytes(
                Map.of(
                        "type", "OrderPlaced",
                        "orderId", id,
                        "customer", customer,
                        "amount", amount,
                        "placedAt", Instant.now().toString()));
    }

    /**
     * Reads an order.
     *
     * @param id the order id
     * @return its columns, or empty
     */
    public Map<String, Object> find(String id) {
        return jdbc
                .queryForList("SELECT id, customer, amount, placed_at FROM orders WHERE id = ?", id)
                .stream()
                .findFirst()
                .orElse(Map.of());
    }
}
