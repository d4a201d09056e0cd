package io.outbox4j.api;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The names under which every publisher puts a message's own fields beside its payload: Kafka
 * record headers, AMQP headers, SQS message attributes. One set of names for all transports, so a
 * consumer reads {@value #ID} whatever carried the message. Every name starts with {@value
 * Message#RESERVED_HEADER_PREFIX}, which {@link Message} forbids in user headers, so a user header
 * can never collide with one of these.
 *
 * <p>Every transport carries the same standard set, {@link #of(Message)}: {@value #ID}, {@value
 * #TOPIC}, {@value #MODULE}, {@value #CONTENT_TYPE}, {@value #OCCURRED_AT}, and {@value #KEY} when
 * the message has a key. Where a transport has a native place for a field, it uses it as well:
 *
 * <table>
 *   <caption>Which transport carries which name</caption>
 *   <tr><th>name</th><th>Kafka header</th><th>AMQP header</th><th>SQS attribute</th></tr>
 *   <tr><td>{@value #ID}</td><td>yes</td><td>yes (and {@code message-id})</td><td>yes</td></tr>
 *   <tr><td>{@value #TOPIC}</td><td>yes</td><td>yes (and {@code type})</td><td>yes</td></tr>
 *   <tr><td>{@value #MODULE}</td><td>yes</td><td>yes</td><td>yes</td></tr>
 *   <tr><td>{@value #CONTENT_TYPE}</td><td>yes</td><td>yes (and {@code
 *       content-type})</td><td>yes</td></tr>
 *   <tr><td>{@value #OCCURRED_AT}</td><td>yes</td><td>yes</td><td>yes</td></tr>
 *   <tr><td>{@value #KEY}</td><td>when the message has a key (and the record
 *       key)</td><td>when the message has a key</td><td>when the message has a key</td></tr>
 *   <tr><td>{@value #HEADERS}</td><td>no: user headers are record headers</td><td>no: user
 *       headers are AMQP headers</td><td>when the message has user headers</td></tr>
 *   <tr><td>{@value #BODY_ENCODING}</td><td>no</td><td>no</td><td>when the body is not the
 *       payload as text</td></tr>
 * </table>
 *
 * Values are UTF-8 text.
 */
public final class OutboxHeaders {
    /** The message id ({@link Message#id()}): the idempotency key consumers deduplicate on. */
    public static final String ID = "outbox-id";

    /**
     * The message topic ({@link Message#topic()}), the event-contract identity; it may differ from
     * the destination the publisher's mapping chose.
     */
    public static final String TOPIC = "outbox-topic";

    /** The publishing module ({@link Message#module()}). */
    public static final String MODULE = "outbox-module";

    /** The payload's media type ({@link Message#contentType()}). */
    public static final String CONTENT_TYPE = "outbox-content-type";

    /**
     * When the event occurred ({@link Message#occurredAt()}), in ISO-8601 as {@link
     * java.time.Instant#toString()} writes it, e.g. {@code 2024-05-01T12:00:00.123456Z}.
     */
    public static final String OCCURRED_AT = "outbox-occurred-at";

    /**
     * The message key ({@link Message#key()}); absent when the message has none (a Kafka record's
     * key is then the message id, which is why a consumer reads the key here).
     */
    public static final String KEY = "outbox-key";

    /**
     * All user headers as one JSON object of string values, in their order, where the transport
     * limits the number of attributes (SQS allows 10); absent when there are none.
     */
    public static final String HEADERS = "outbox-headers";

    /**
     * Present when the transported body is not the payload itself (SQS bodies must be text); its
     * value names the encoding, defined by the publisher that wrote it.
     */
    public static final String BODY_ENCODING = "outbox-body-encoding";

    private OutboxHeaders() {}

    /**
     * The standard headers of a message, the same on every transport, in this order: {@value #ID},
     * {@value #TOPIC}, {@value #MODULE}, {@value #CONTENT_TYPE}, {@value #OCCURRED_AT} (ISO-8601 as
     * {@link java.time.Instant#toString()} writes it) and {@value #KEY} when the message has a key.
     * User headers are not included: each transport adds them its own way.
     *
     * @param message the message
     * @return the names and UTF-8 text values, unmodifiable, in the order above
     * @throws IllegalArgumentException if {@code message} is null
     */
    public static Map<String, String> of(Message message) {
        Checks.notNull(message, "message");
        Map<String, String> headers = new LinkedHashMap<>(8);
        headers.put(ID, message.id());
        headers.put(TOPIC, message.topic());
        headers.put(MODULE, message.module());
        headers.put(CONTENT_TYPE, message.contentType());
        headers.put(OCCURRED_AT, message.occurredAt().toString());
        message.key().ifPresent(key -> headers.put(KEY, key));
        return Collections.unmodifiableMap(headers);
    }
}
