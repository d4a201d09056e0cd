package io.outbox4j.examples.springboot;

import java.math.BigDecimal;
import java.net.URI;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders {"customer": "c-1", "amount": 12.5}} and {@code GET /orders/{id}}. */
@RestController
class OrderController {
    private final OrderService orders;

    OrderController(OrderService orders) {
        this.orders = orders;
    }

    /** The body of {@code POST /orders}. */
    record PlaceOrder(String customer, BigDecimal amount) {}

    @PostMapping("/orders")
    ResponseEntity<Map<String, Object>> place(@RequestBody PlaceOrder request) {
        if (request.customer() == null
                || request.customer().isBlank()
                || request.amount() == null) {
            return ResponseEntity.badRequest()
                    .body(Map.of("error", "customer and amount are required"));
        }
        try {
            String id = orders.place(request.customer(), request.amount());
            return ResponseEntity.created(URI.create("/orders/" + id)).body(Map.of("id", id));
        } catch (IllegalArgumentException e) {
            return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
        }
    }

    @GetMapping("/orders/{id}")
    ResponseEntity<Map<String, Object>> get(@PathVariable String id) {
        Map<String, Object> order = orders.find(id);
        return order.isEmpty() ? ResponseEntity.notFound().build() : ResponseEntity.ok(order);
    }
}
