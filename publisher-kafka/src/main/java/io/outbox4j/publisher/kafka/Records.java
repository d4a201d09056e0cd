package io.outbox4j.publisher.kafka;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.Publisher;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/** Maps a message to its Kafka record. */
final class Records {
    /**
     * Kafka's own rule for topic names (org.apache.kafka.common.internals.Topic), checked before
     * sending.
     */
    private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private Records() {}

    /**
     * Returns the Kafka topic of a message.
     *
     * @throws PermanentFailureException if the mapper throws or gives no valid Kafka topic name
     * @throws io.outbox4j.api.RetryAfterException if the mapper throws one ({@link
     *     Publisher#applyMapper})
     */
    static String topic(Message m, Function<Message, String> topicMapper) {
        String topic = Publisher.applyMapper(topicMapper, "topicMapper", m);
        if (topic == null
                || !LEGAL_TOPIC.matcher(topic).matches()
                || topic.equals(".")
                || topic.equals("..")) {
            throw new PermanentFailureException(
                    "message '"
                            + m.id()
                            + "' maps to "
                            + (topic == null
                                    ? "no Kafka topic (the topic mapper returned null)"
                                    : "'" + topic + "'")
                            + (topic == null
                                    ? ""
                                    : ", which is not a valid Kafka topic name: 1 to 249 of"
                                            + " [a-zA-Z0-9._-], not '.' or '..'"));
        }
        return topic;
    }

    static ProducerRecord<byte[], byte[]> toRecord(Message m, String topic) {
        Map<String, String> user = m.headers();
        List<Header> headers = new ArrayList<>(6 + user.size());
        OutboxHeaders.of(m).forEach((name, value) -> headers.add(header(name, value)));
        user.forEach((name, value) -> headers.add(header(name, value)));
        byte[] key = m.key().orElse(m.id()).getBytes(StandardCharsets.UTF_8);
        return new ProducerRecord<>(topic, null, null, key, m.payload(), headers);
    }

    private static Header header(String name, String value) {
        return new RecordHeader(name, value.getBytes(StandardCharsets.UTF_8));
    }
}
