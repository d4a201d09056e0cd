package io.outbox4j.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OutboxHeadersTest {
    private static Message.Builder message() {
        return TestMessages.valid()
                .id("m-1")
                .contentType("application/json")
                .occurredAt(Instant.parse("2026-12-05T01:02:03.456789Z"))
                .header("tenant", "acme");
    }

    @Test
    void of_isTheStandardSetInOrder_withTheKeyWhenThereIsOne() {
        assertThat(OutboxHeaders.of(message().key("customer-7").build()))
                .containsExactly(
                        Map.entry(OutboxHeaders.ID, "m-1"),
                        Map.entry(OutboxHeaders.TOPIC, "orders.created"),
                        Map.entry(OutboxHeaders.MODULE, "orders"),
                        Map.entry(OutboxHeaders.CONTENT_TYPE, "application/json"),
                        Map.entry(OutboxHeaders.OCCURRED_AT, "2026-12-05T01:02:03.456789Z"),
                        Map.entry(OutboxHeaders.KEY, "customer-7"));
    }

    @Test
    void of_leavesOutTheKeyOfAKeylessMessage_andNeverTheUserHeaders() {
        Map<String, String> headers = OutboxHeaders.of(message().build());
        assertThat(headers).doesNotContainKeys(OutboxHeaders.KEY, "tenant").hasSize(5);
        assertThatThrownBy(() -> headers.put("x", "y"))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void of_refusesNull() {
        assertThatThrownBy(() -> OutboxHeaders.of(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("message");
    }
}
