package io.outbox4j.store.mongo;

import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Release;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Checks of configuration values and of messages against the store's limits; every message names
 * the field.
 */
final class Validation {
    /** MongoDB's largest document, in bytes. */
    static final int MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

    /**
     * The longest collection name the store accepts (MongoDB's own limit is on the full namespace).
     */
    static final int MAX_COLLECTION_NAME_LENGTH = 120;

    private static final int MAX_DATABASE_NAME_BYTES = 63;
    private static final String DATABASE_FORBIDDEN = "/\\. \"$*<>:|?";

    private Validation() {}

    static <T> T notNull(@Nullable T value, String field) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        return value;
    }

    static String collectionName(String name) {
        notNull(name, "collection");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("collection must not be empty");
        }
        if (name.length() > MAX_COLLECTION_NAME_LENGTH) {
            throw new IllegalArgumentException(
                    "collection is "
                            + name.length()
                            + " characters, over the "
                            + MAX_COLLECTION_NAME_LENGTH
                            + " limit");
        }
        if (name.indexOf('$') >= 0) {
            throw new IllegalArgumentException(
                    "collection must not contain '$', but was '" + name + "'");
        }
        if (name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(
                    "collection must not contain the NUL character, but was '"
                            + name.replace("\0", "\\0")
                            + "'");
        }
        if (name.startsWith("system.")) {
            throw new IllegalArgumentException(
                    "collection must not start with 'system.' (reserved by MongoDB), but was '"
                            + name
                            + "'");
        }
        return name;
    }

    static String databaseName(String name) {
        notNull(name, "database");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("database must not be empty");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (DATABASE_FORBIDDEN.indexOf(c) >= 0 || c == '\0') {
                throw new IllegalArgumentException(
                        "database must not contain any of /\\. \"$*<>:|? or NUL, but was '"
                                + name.replace("\0", "\\0")
                                + "'");
            }
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_DATABASE_NAME_BYTES) {
            throw new IllegalArgumentException(
                    "database is "
                            + bytes
                            + " bytes, over MongoDB's "
                            + MAX_DATABASE_NAME_BYTES
                            + "-byte limit");
        }
        return name;
    }

    /**
     * Rejects limits that would let a message grow past MongoDB's 16 MiB document size. The bound
     * counts every character as 3 UTF-8 bytes (the most a UTF-16 unit takes) and leaves 64 KiB for
     * field names, the content type and the bookkeeping fields.
     */
    static MessageLimits limits(MessageLimits limits) {
        notNull(limits, "limits");
        if (limits.maxIdLength() > Receipt.MAX_ID_LENGTH) {
            throw new IllegalArgumentException(
                    "limits.maxIdLength must be <= "
                            + Receipt.MAX_ID_LENGTH
                            + " for the MongoDB store (a receipt carries the id within 512 characters), but was "
                            + limits.maxIdLength());
        }
        long chars =
                (long) limits.maxIdLength()
                        + limits.maxTopicLength()
                        + limits.maxKeyLength()
                        + limits.maxModuleLength()
                        + (long) limits.maxHeaders()
                                * ((long) limits.maxHeaderNameLength()
                                        + limits.maxHeaderValueLength())
                        + 255
                        + 2L * Release.MAX_ERROR_LENGTH;
        long bound = limits.maxPayloadBytes() + 3 * chars + 64 * 1024;
        if (bound > MAX_DOCUMENT_BYTES) {
            throw new IllegalArgumentException(
                    "limits allow messages of up to "
                            + bound
                            + " bytes as a document, over MongoDB's "
                            + MAX_DOCUMENT_BYTES
                            + "-byte limit; lower maxPayloadBytes ("
                            + limits.maxPayloadBytes()
                            + ") or the header limits");
        }
        return limits;
    }

    /** Checks a message built elsewhere (perhaps with larger limits) against the store's limits. */
    static void message(Message m, MessageLimits limits) {
        length(m.id(), "id", limits.maxIdLength());
        length(m.topic(), "topic", limits.maxTopicLength());
        if (m.key().isPresent()) {
            length(m.key().get(), "key", limits.maxKeyLength());
        }
        length(m.module(), "module", limits.maxModuleLength());
        if (m.payloadSize() > limits.maxPayloadBytes()) {
            throw new IllegalArgumentException(
                    "payload of message '"
                            + m.id()
                            + "' is "
                            + m.payloadSize()
                            + " bytes, over the "
                            + limits.maxPayloadBytes()
                            + " limit of this store");
        }
        if (m.headers().size() > limits.maxHeaders()) {
            throw new IllegalArgumentException(
                    "headers of message '"
                            + m.id()
                            + "' has "
                            + m.headers().size()
                            + " entries, over the "
                            + limits.maxHeaders()
                            + " limit of this store");
        }
        for (Map.Entry<String, String> h : m.headers().entrySet()) {
            length(h.getKey(), "header name", limits.maxHeaderNameLength());
            length(
                    h.getValue(),
                    "header '" + h.getKey() + "' value",
                    limits.maxHeaderValueLength());
        }
    }

    private static void length(String value, String field, int max) {
        if (value.length() > max) {
            throw new IllegalArgumentException(
                    field
                            + " is "
                            + value.length()
                            + " characters, over the "
                            + max
                            + " limit of this store");
        }
    }
}
