package io.outbox4j.kafka.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

class TopicsAndRecordsTest {
    @Test
    void byDefault_theMessageTopicIsTheKafkaTopic() {
        assertThat(new TopicMapper(null, null, null, "").topicFor("orders.created"))
                .isEqualTo("orders.created");
    }

    @Test
    void fixedTopic_winsOverTheMessageTopic() {
        assertThat(new TopicMapper("events", null, null, "").topicFor("orders.created"))
                .isEqualTo("events");
    }

    @Test
    void regexRewritesMatchingTopics_thenThePrefixIsPut() {
        TopicMapper m = new TopicMapper(null, Pattern.compile("orders\\.(.*)"), "shop-$1", "prod.");
        assertThat(m.topicFor("orders.created")).isEqualTo("prod.shop-created");
        assertThat(m.topicFor("payments.done")).isEqualTo("prod.payments.done");
    }

    @Test
    void topicNameRules_followKafka() {
        assertThat(OutboxSourceConnectorConfig.topicNameProblem("orders.created-v1_2")).isNull();
        assertThat(OutboxSourceConnectorConfig.topicNameProblem("")).isEqualTo("is empty");
        assertThat(OutboxSourceConnectorConfig.topicNameProblem("..")).contains("'.' or '..'");
        assertThat(OutboxSourceConnectorConfig.topicNameProblem("a".repeat(250))).contains("249");
        assertThat(OutboxSourceConnectorConfig.topicNameProblem("orders/created")).contains("'/'");
    }

    @Test
    void record_carriesKeyPayloadOutboxHeadersThenUserHeaders() {
        Map<String, String> user = new LinkedHashMap<>();
        user.put("trace-id", "abc");
        user.put("tenant", "t1");
        Message m =
                Message.builder()
                        .id("m-1")
                        .topic("orders.created")
                        .key("order-7")
                        .module("orders")
                        .contentType("application/json")
                        .payload("{\"n\":1}")
                        .headers(user)
                        .occurredAt(Instant.parse("2026-12-01T10:15:30.123456Z"))
                        .build();
        SourceRecord r = Records.toRecord(m, "prod.orders");

        assertThat(r.topic()).isEqualTo("prod.orders");
        assertThat(r.kafkaPartition()).isNull();
        assertThat(r.sourcePartition()).isNull();
        assertThat(r.sourceOffset()).isNull();
        assertThat(r.keySchema()).isEqualTo(Schema.STRING_SCHEMA);
        assertThat(r.key()).isEqualTo("order-7");
        assertThat(r.valueSchema()).isEqualTo(Schema.BYTES_SCHEMA);
        assertThat(new String((byte[]) r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"n\":1}");
        Map<String, Object> headers = new LinkedHashMap<>();
        for (Header h : r.headers()) {
            headers.put(h.key(), h.value());
        }
        assertThat(headers)
                .containsExactly(
                        Map.entry(OutboxHeaders.ID, "m-1"),
                        Map.entry(OutboxHeaders.TOPIC, "orders.created"),
                        Map.entry(OutboxHeaders.MODULE, "orders"),
                        Map.entry(OutboxHeaders.CONTENT_TYPE, "application/json"),
                        Map.entry(OutboxHeaders.OCCURRED_AT, "2026-12-01T10:15:30.123456Z"),
                        Map.entry(OutboxHeaders.KEY, "order-7"),
                        Map.entry("trace-id", "abc"),
                        Map.entry("tenant", "t1"));
    }

    @Test
    void recordKey_isTheIdWhenTheMessageHasNoKey() {
        Message m =
                Message.builder().id("m-2").topic("t").module("mod").payload(new byte[0]).build();
        assertThat(Records.toRecord(m, "t").key()).isEqualTo("m-2");
    }

    @Test
    void redact_hidesQueryAndUserInfo() {
        assertThat(Redact.url("jdbc:postgresql://u:pw@db:5432/app?password=x"))
                .isEqualTo("jdbc:postgresql://***@db:5432/app?...");
        assertThat(Redact.url("jdbc:h2:mem:x")).isEqualTo("jdbc:h2:mem:x");
    }
}
