package io.outbox4j.faulttests;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A producer interceptor that stamps each record with the relay that published it (header {@value
 * #HEADER}), so the consumer can tell a redelivery by the next relay from a record the killed relay
 * had already sent. Configured through the producer property {@value #RELAY_CONFIG}.
 */
public final class RelayTagInterceptor implements ProducerInterceptor<byte[], byte[]> {
    /** The header naming the relay. */
    public static final String HEADER = "fault-relay";

    /** The producer property holding the relay's name. */
    public static final String RELAY_CONFIG = "outbox4j.faulttests.relay";

    private byte[] relay = "?".getBytes(StandardCharsets.UTF_8);

    /** Creates the interceptor (Kafka instantiates it by class name). */
    public RelayTagInterceptor() {}

    @Override
    public void configure(Map<String, ?> configs) {
        Object name = configs.get(RELAY_CONFIG);
        if (name != null) {
            relay = name.toString().getBytes(StandardCharsets.UTF_8);
        }
    }

    @Override
    public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
        record.headers().remove(HEADER);
        record.headers().add(HEADER, relay);
        return record;
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

    @Override
    public void close() {}
}
