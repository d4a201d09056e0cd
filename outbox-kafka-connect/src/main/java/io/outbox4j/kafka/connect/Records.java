package io.outbox4j.kafka.connect;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Turns a message into a source record: key = message key (else id) as a string, value = payload
 * bytes, the {@code outbox-*} headers then the user headers as strings. No source partition or
 * offset: the store, not Connect's offsets, tracks what was delivered.
 */
final class Records {
    private Records() {}

    static SourceRecord toRecord(Message m, String topic) {
        ConnectHeaders headers = new ConnectHeaders();
        OutboxHeaders.of(m).forEach(headers::addString);
        for (Map.Entry<String, String> h : m.headers().entrySet()) {
            headers.addString(h.getKey(), h.getValue());
        }
        return new SourceRecord(
                null,
                null,
                topic,
                null,
                Schema.STRING_SCHEMA,
                m.key().orElse(m.id()),
                Schema.BYTES_SCHEMA,
                m.payload(),
                null,
                headers);
    }
}
