package io.outbox4j.api;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * An immutable, validated event ready to be stored in an outbox and published to a broker.
 *
 * <ul>
 *   <li>{@code id} — caller-owned idempotency key, unique per outbox; downstream consumers
 *       deduplicate on it.
 *   <li>{@code topic} — the stable identity of the event contract and the default destination.
 *   <li>{@code key} — optional ordering and partition key.
 *   <li>{@code module} — the identity of the module that published the event.
 *   <li>{@code contentType} — the payload's media type, normalised (lower-case type and parameter
 *       names).
 *   <li>{@code payload} — the serialized event; copied on the way in and on the way out.
 *   <li>{@code headers} — user headers in insertion order; names may not use the reserved {@code
 *       outbox-} prefix nor contain CR or LF.
 *   <li>{@code occurredAt} — when the event happened (UTC, microsecond precision).
 *   <li>{@code notBefore} — optional earliest publication time, for delayed delivery.
 * </ul>
 *
 * <p>Build one with {@link #builder()}. Every check runs in {@link Builder#build()}, and a bad
 * value fails there with an {@link IllegalArgumentException} naming the field, before anything
 * touches the outbox.
 */
public final class Message {
    /**
     * Header names starting with this prefix (in any case) are reserved for outbox4j's own headers.
     */
    public static final String RESERVED_HEADER_PREFIX = "outbox-";

    /** The content type used when none is given. */
    public static final String DEFAULT_CONTENT_TYPE = "application/octet-stream";

    private static final String TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
    private static final Pattern MEDIA_TYPE = Pattern.compile("(" + TOKEN + ")/(" + TOKEN + ")");
    private static final Pattern PARAMETER =
            Pattern.compile("(" + TOKEN + ")=(" + TOKEN + "|\"[^\"\\\\\\r\\n]*\")");

    private final String id;
    private final String topic;
    private final @Nullable String key;
    private final String module;
    private final String contentType;
    private final byte[] payload;
    private final Map<String, String> headers;
    private final Instant occurredAt;
    private final @Nullable Instant notBefore;

    private Message(Builder b) {
        MessageLimits limits = Checks.notNull(b.limits, "limits");
        this.id = Checks.text(b.id, "id", limits.maxIdLength());
        this.topic = Checks.text(b.topic, "topic", limits.maxTopicLength());
        for (int i = 0; i < topic.length(); i++) { // a loop: every message read back runs it
            if (Character.isWhitespace(topic.charAt(i))) {
                throw new IllegalArgumentException(
                        "topic must not contain whitespace, but was '" + topic + "'");
            }
        }
        this.key = b.key == null ? null : Checks.text(b.key, "key", limits.maxKeyLength());
        this.module = Checks.text(b.module, "module", limits.maxModuleLength());
        this.contentType = normaliseContentType(b.contentType);
        byte[] given = Checks.notNull(b.payload, "payload");
        if (given.length > limits.maxPayloadBytes()) {
            throw new IllegalArgumentException(
                    "payload is "
                            + given.length
                            + " bytes, over the "
                            + limits.maxPayloadBytes()
                            + " limit");
        }
        this.payload = given.clone();
        this.headers = checkHeaders(b.headers, limits);
        this.occurredAt =
                Checks.micros(b.occurredAt == null ? Instant.now() : b.occurredAt, "occurredAt");
        this.notBefore = b.notBefore == null ? null : Checks.micros(b.notBefore, "notBefore");
    }

    private static Map<String, String> checkHeaders(
            Map<String, String> given, MessageLimits limits) {
        if (given.size() > limits.maxHeaders()) {
            throw new IllegalArgumentException(
                    "headers has "
                            + given.size()
                            + " entries, over the "
                            + limits.maxHeaders()
                            + " limit");
        }
        Map<String, String> copy = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : given.entrySet()) {
            String name = e.getKey();
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("header name must not be empty");
            }
            if (name.indexOf('\r') >= 0 || name.indexOf('\n') >= 0) {
                throw new IllegalArgumentException(
                        "header name must not contain CR or LF, but was '"
                                + name.replace("\r", "\\r").replace("\n", "\\n")
                                + "'");
            }
            Checks.text(name, "header name", limits.maxHeaderNameLength());
            if (name.toLowerCase(Locale.ROOT).startsWith(RESERVED_HEADER_PREFIX)) {
                throw new IllegalArgumentException(
                        "header name '"
                                + name
                                + "' uses the reserved prefix '"
                                + RESERVED_HEADER_PREFIX
                                + "'");
            }
            String value = e.getValue();
            if (value == null) {
                throw new IllegalArgumentException(
                        "header '" + name + "' must not have a null value");
            }
            if (value.length() > limits.maxHeaderValueLength()) {
                throw new IllegalArgumentException(
                        "header '"
                                + name
                                + "' value is "
                                + value.length()
                                + " characters, over the "
                                + limits.maxHeaderValueLength()
                                + " limit");
            }
            copy.put(name, value);
        }
        return Collections.unmodifiableMap(copy);
    }

    /**
     * Content types already checked, given → normalised: an application uses a handful, and every
     * message a store reads back is built again, so the regular expressions run once per distinct
     * value instead of once per message (they were a tenth of the relay's own CPU in a drain).
     * Bounded: past {@value #MAX_CACHED_CONTENT_TYPES} distinct values, the rest are checked each
     * time.
     */
    private static final Map<String, String> CONTENT_TYPES = new ConcurrentHashMap<>();

    private static final int MAX_CACHED_CONTENT_TYPES = 256;

    static String normaliseContentType(@Nullable String given) {
        given = Checks.notNull(given, "contentType");
        String known = CONTENT_TYPES.get(given);
        if (known != null) {
            return known;
        }
        String normalised = checkContentType(given);
        if (CONTENT_TYPES.size() < MAX_CACHED_CONTENT_TYPES) {
            CONTENT_TYPES.put(given, normalised);
        }
        return normalised;
    }

    private static String checkContentType(String given) {
        String[] parts = given.split(";", -1);
        var type = MEDIA_TYPE.matcher(parts[0].strip());
        if (!type.matches()) {
            throw new IllegalArgumentException(
                    "contentType must be a media type like 'application/json', but was '"
                            + given
                            + "'");
        }
        StringBuilder out =
                new StringBuilder()
                        .append(type.group(1).toLowerCase(Locale.ROOT))
                        .append('/')
                        .append(type.group(2).toLowerCase(Locale.ROOT));
        for (int i = 1; i < parts.length; i++) {
            var p = PARAMETER.matcher(parts[i].strip());
            if (!p.matches()) {
                throw new IllegalArgumentException(
                        "contentType has a malformed parameter '"
                                + parts[i].strip()
                                + "' in '"
                                + given
                                + "'");
            }
            String name = p.group(1).toLowerCase(Locale.ROOT);
            String value =
                    name.equals("charset") ? p.group(2).toLowerCase(Locale.ROOT) : p.group(2);
            out.append("; ").append(name).append('=').append(value);
        }
        return out.toString();
    }

    /**
     * Starts a message.
     *
     * @return a new builder with the default limits, content type {@value #DEFAULT_CONTENT_TYPE}
     *     and no headers
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts a builder that holds this message's values, to derive a changed copy.
     *
     * @return a builder initialised from this message
     */
    public Builder toBuilder() {
        Builder b =
                new Builder()
                        .id(id)
                        .topic(topic)
                        .module(module)
                        .contentType(contentType)
                        .payload(payload)
                        .headers(headers)
                        .occurredAt(occurredAt);
        b.key = key;
        b.notBefore = notBefore;
        return b;
    }

    /**
     * Returns the caller-owned idempotency key.
     *
     * @return the id
     */
    public String id() {
        return id;
    }

    /**
     * Returns the stable event-contract identity, also the default destination.
     *
     * @return the topic
     */
    public String topic() {
        return topic;
    }

    /**
     * Returns the ordering and partition key, if any.
     *
     * @return the key, or empty
     */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /**
     * Returns the identity of the module that published the event.
     *
     * @return the module
     */
    public String module() {
        return module;
    }

    /**
     * Returns the normalised media type of the payload.
     *
     * @return the content type
     */
    public String contentType() {
        return contentType;
    }

    /**
     * Returns a copy of the payload.
     *
     * @return the payload bytes; changing them does not change the message
     */
    public byte[] payload() {
        return payload.clone();
    }

    /**
     * Returns the payload size without copying it.
     *
     * @return the payload size in bytes
     */
    public int payloadSize() {
        return payload.length;
    }

    /**
     * Returns the payload decoded as UTF-8, for text payloads.
     *
     * @return the payload as a string
     */
    public String payloadAsString() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    /**
     * Returns the user headers in insertion order.
     *
     * @return an unmodifiable map of header names to values
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * Returns when the event happened.
     *
     * @return the occurrence instant, truncated to microseconds
     */
    public Instant occurredAt() {
        return occurredAt;
    }

    /**
     * Returns the earliest time the message may be published, if delayed.
     *
     * @return the not-before instant (truncated to microseconds), or empty to publish as soon as
     *     possible
     */
    public Optional<Instant> notBefore() {
        return Optional.ofNullable(notBefore);
    }

    /** Two messages are equal when every field, payload bytes included, is equal. */
    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Message m)) {
            return false;
        }
        return id.equals(m.id)
                && topic.equals(m.topic)
                && Objects.equals(key, m.key)
                && module.equals(m.module)
                && contentType.equals(m.contentType)
                && Arrays.equals(payload, m.payload)
                && headers.equals(m.headers)
                && occurredAt.equals(m.occurredAt)
                && Objects.equals(notBefore, m.notBefore);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                id,
                topic,
                key,
                module,
                contentType,
                Arrays.hashCode(payload),
                headers,
                occurredAt,
                notBefore);
    }

    /** Describes the message without its payload or header values, so it is safe to log. */
    @Override
    public String toString() {
        return "Message[id="
                + id
                + ", topic="
                + topic
                + ", key="
                + key
                + ", module="
                + module
                + ", contentType="
                + contentType
                + ", payload="
                + payload.length
                + " bytes, headers="
                + headers.keySet()
                + ", occurredAt="
                + occurredAt
                + (notBefore == null ? "" : ", notBefore=" + notBefore)
                + "]";
    }

    /** Collects the fields of a {@link Message}; {@link #build()} validates them all. */
    public static final class Builder {
        private @Nullable String id;
        private @Nullable String topic;
        private @Nullable String key;
        private @Nullable String module;
        private @Nullable String contentType = DEFAULT_CONTENT_TYPE;
        private byte @Nullable [] payload = new byte[0];
        private final Map<String, String> headers = new LinkedHashMap<>();
        private @Nullable Instant occurredAt;
        private @Nullable Instant notBefore;
        private MessageLimits limits = MessageLimits.DEFAULTS;

        private Builder() {}

        /**
         * Sets the idempotency key (required, unique per outbox).
         *
         * @param id the id
         * @return this builder
         */
        public Builder id(String id) {
            this.id = id;
            return this;
        }

        /**
         * Sets the topic (required; no whitespace).
         *
         * @param topic the topic
         * @return this builder
         */
        public Builder topic(String topic) {
            this.topic = topic;
            return this;
        }

        /**
         * Sets the ordering and partition key.
         *
         * @param key the key, or {@code null} for none
         * @return this builder
         */
        public Builder key(@Nullable String key) {
            this.key = key;
            return this;
        }

        /**
         * Sets the publishing module's identity (required).
         *
         * @param module the module
         * @return this builder
         */
        public Builder module(String module) {
            this.module = module;
            return this;
        }

        /**
         * Sets the payload's media type; it is normalised when built.
         *
         * @param contentType a media type such as {@code application/json}
         * @return this builder
         */
        public Builder contentType(String contentType) {
            this.contentType = contentType;
            return this;
        }

        /**
         * Sets the payload; the bytes are copied when the message is built.
         *
         * @param payload the serialized event
         * @return this builder
         */
        public Builder payload(byte[] payload) {
            this.payload = payload;
            return this;
        }

        /**
         * Sets the payload as UTF-8 text.
         *
         * @param payload the serialized event
         * @return this builder
         */
        public Builder payload(String payload) {
            this.payload = payload == null ? null : payload.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /**
         * Adds one user header; a later value for the same name replaces the earlier one.
         *
         * @param name the header name
         * @param value the header value
         * @return this builder
         */
        public Builder header(String name, String value) {
            if (name == null) {
                throw new IllegalArgumentException("header name must not be null");
            }
            headers.put(name, value);
            return this;
        }

        /**
         * Replaces the user headers with the given ones, in their iteration order.
         *
         * @param headers the headers
         * @return this builder
         */
        public Builder headers(Map<String, String> headers) {
            Checks.notNull(headers, "headers");
            this.headers.clear();
            headers.forEach(this::header);
            return this;
        }

        /**
         * Sets when the event happened; defaults to the time {@link #build()} runs.
         *
         * @param occurredAt the occurrence instant
         * @return this builder
         */
        public Builder occurredAt(Instant occurredAt) {
            this.occurredAt = occurredAt;
            return this;
        }

        /**
         * Delays publication until the given instant.
         *
         * @param notBefore the earliest publication time, or {@code null} for none
         * @return this builder
         */
        public Builder notBefore(@Nullable Instant notBefore) {
            this.notBefore = notBefore;
            return this;
        }

        /**
         * Sets the limits the message is checked against.
         *
         * @param limits the limits; {@link MessageLimits#DEFAULTS} unless set
         * @return this builder
         */
        public Builder limits(MessageLimits limits) {
            this.limits = limits;
            return this;
        }

        /**
         * Validates every field and builds the message.
         *
         * @return the immutable message
         * @throws IllegalArgumentException naming the first field that is missing or invalid
         */
        public Message build() {
            return new Message(this);
        }
    }
}
