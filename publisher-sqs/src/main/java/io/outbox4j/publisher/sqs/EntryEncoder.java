package io.outbox4j.publisher.sqs;

import io.outbox4j.api.InvalidMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.RetryableFailureException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * Turns a {@link Message} into one SendMessageBatch entry: body, message attributes, FIFO group and
 * deduplication ids, and the size SQS will count for it. Everything SQS would reject for this
 * message alone is detected here, before sending, and reported as a failure of this message only.
 */
final class EntryEncoder {
    /** SQS allows at most this many message attributes on one message. */
    static final int MAX_ATTRIBUTES = 10;

    /** SQS batch entry ids: alphanumeric, hyphen, underscore, at most 80 characters. */
    static final int MAX_ENTRY_ID_LENGTH = 80;

    /** MessageGroupId and MessageDeduplicationId: at most 128 characters. */
    static final int MAX_FIFO_ID_LENGTH = 128;

    private static final String STRING = "String";
    private static final String HASH_PREFIX = "sha256-";

    private final int maxMessageBytes;
    private final @Nullable String fifoDefaultGroupId;

    EntryEncoder(int maxMessageBytes, @Nullable String fifoDefaultGroupId) {
        this.maxMessageBytes = maxMessageBytes;
        this.fifoDefaultGroupId = fifoDefaultGroupId;
    }

    /** One encoded message, ready to go into a batch of its queue. */
    record Entry(
            int index,
            Message message,
            String queueUrl,
            @Nullable String groupId,
            SendMessageBatchRequestEntry request,
            int bytes) {
        String entryId() {
            return request.id();
        }
    }

    /**
     * Encodes a message for a queue.
     *
     * @throws InvalidMessageException if SQS can never accept this message (too large, characters
     *     SQS refuses)
     * @throws RetryableFailureException if the configuration lacks something this message needs
     */
    Entry encode(int index, Message m, String queueUrl) {
        boolean fifo = isFifo(queueUrl);
        Map<String, MessageAttributeValue> attributes = new LinkedHashMap<>();
        OutboxHeaders.of(m).forEach((name, value) -> put(attributes, m, name, value));
        if (!m.headers().isEmpty()) {
            put(attributes, m, OutboxHeaders.HEADERS, headersJson(m.headers()));
        }
        byte[] payload = m.payload();
        String body = textOrNull(payload);
        String bodyNote = "";
        if (body == null) {
            if (payload.length == 0) {
                body = SqsPublisher.EMPTY_BODY;
                put(attributes, m, OutboxHeaders.BODY_ENCODING, SqsPublisher.ENCODING_EMPTY);
            } else {
                body = Base64.getEncoder().encodeToString(payload);
                bodyNote = " (base64 of a " + payload.length + "-byte binary payload)";
                put(attributes, m, OutboxHeaders.BODY_ENCODING, SqsPublisher.ENCODING_BASE64);
            }
        }
        // 8 attributes at most by construction; the check guards future additions.
        if (attributes.size() > MAX_ATTRIBUTES) {
            throw new IllegalStateException(
                    "built " + attributes.size() + " attributes, over SQS's " + MAX_ATTRIBUTES);
        }
        int bytes = size(body, attributes);
        if (bytes > maxMessageBytes) {
            throw new InvalidMessageException(
                    "message '"
                            + m.id()
                            + "' is "
                            + bytes
                            + " bytes as an SQS message"
                            + " (body "
                            + utf8Length(body)
                            + " bytes"
                            + bodyNote
                            + ", attributes "
                            + (bytes - utf8Length(body))
                            + " bytes), over the maxMessageBytes limit of "
                            + maxMessageBytes);
        }
        var request =
                SendMessageBatchRequestEntry.builder()
                        .id(entryId(index, m.id()))
                        .messageBody(body)
                        .messageAttributes(attributes);
        String groupId = null;
        if (fifo) {
            String group = m.key().orElse(fifoDefaultGroupId);
            if (group == null) {
                throw new RetryableFailureException(
                        "message '"
                                + m.id()
                                + "' has no key, and the FIFO queue "
                                + queueUrl
                                + " needs a MessageGroupId: give the message a key or configure "
                                + "SqsPublisher.builder().fifoDefaultGroupId(...); the message will be retried");
            }
            groupId = fifoId(group);
            request.messageGroupId(groupId).messageDeduplicationId(fifoId(m.id()));
        }
        return new Entry(index, m, queueUrl, groupId, request.build(), bytes);
    }

    static boolean isFifo(String queueUrl) {
        return queueUrl.endsWith(".fifo");
    }

    /**
     * {@code <index>-<id with every character SQS refuses replaced by '_'>}, cut to 80 characters.
     */
    static String entryId(int index, String messageId) {
        StringBuilder b = new StringBuilder(MAX_ENTRY_ID_LENGTH).append(index).append('-');
        for (int i = 0; i < messageId.length() && b.length() < MAX_ENTRY_ID_LENGTH; i++) {
            char c = messageId.charAt(i);
            boolean ok =
                    (c >= 'a' && c <= 'z')
                            || (c >= 'A' && c <= 'Z')
                            || (c >= '0' && c <= '9')
                            || c == '-'
                            || c == '_';
            b.append(ok ? c : '_');
        }
        return b.toString();
    }

    /**
     * A MessageGroupId or MessageDeduplicationId: the value itself when SQS accepts it (1 to 128
     * printable ASCII characters), else {@code sha256-<hex>} of its UTF-8 bytes, so equal values
     * still map to equal ids.
     */
    static String fifoId(String value) {
        boolean ok =
                !value.isEmpty()
                        && value.length() <= MAX_FIFO_ID_LENGTH
                        && value.chars().allMatch(c -> c >= 0x21 && c <= 0x7E);
        if (ok) {
            return value;
        }
        try {
            byte[] digest =
                    MessageDigest.getInstance("SHA-256")
                            .digest(value.getBytes(StandardCharsets.UTF_8));
            return HASH_PREFIX + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    /**
     * The payload as a String if it is valid UTF-8 made only of characters SQS accepts; otherwise
     * null.
     */
    static @Nullable String textOrNull(byte[] payload) {
        if (payload.length == 0) {
            return null;
        }
        String text;
        try {
            text =
                    StandardCharsets.UTF_8
                            .newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(payload))
                            .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        return firstRefused(text) < 0 ? text : null;
    }

    /**
     * {@code #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF}: what SQS accepts in
     * text.
     */
    static boolean allowed(int cp) {
        return cp == 0x9
                || cp == 0xA
                || cp == 0xD
                || (cp >= 0x20 && cp <= 0xD7FF)
                || (cp >= 0xE000 && cp <= 0xFFFD)
                || (cp >= 0x10000 && cp <= 0x10FFFF);
    }

    /**
     * The first code point SQS refuses (an unpaired surrogate counts as one), or -1 when there is
     * none.
     */
    static int firstRefused(String s) {
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (!allowed(cp)) {
                return cp;
            }
            i += Character.charCount(cp);
        }
        return -1;
    }

    private static void put(
            Map<String, MessageAttributeValue> attributes, Message m, String name, String value) {
        int refused = firstRefused(value);
        if (refused >= 0) {
            throw new InvalidMessageException(
                    "message '"
                            + m.id()
                            + "' cannot be sent to SQS: its "
                            + name
                            + " attribute would contain U+"
                            + String.format("%04X", refused)
                            + ", a character SQS does not accept");
        }
        attributes.put(
                name, MessageAttributeValue.builder().dataType(STRING).stringValue(value).build());
    }

    /**
     * The user headers as one JSON object, in their order. Every character SQS refuses (and every
     * JSON control character) is written as a {@code \}{@code uXXXX} escape, so the text is always
     * acceptable to SQS.
     */
    static String headersJson(Map<String, String> headers) {
        StringBuilder b = new StringBuilder(64).append('{');
        for (Map.Entry<String, String> e : headers.entrySet()) {
            if (b.length() > 1) {
                b.append(',');
            }
            appendJsonString(b, e.getKey()).append(':');
            appendJsonString(b, e.getValue());
        }
        return b.append('}').toString();
    }

    private static StringBuilder appendJsonString(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            int n = Character.charCount(cp);
            if (cp == '"' || cp == '\\') {
                b.append('\\').append((char) cp);
            } else if (cp < 0x20 || !allowed(cp)) {
                b.append(
                        String.format(
                                "\\u%04x",
                                cp)); // control, unpaired surrogate, U+FFFE, U+FFFF: all BMP
            } else {
                b.append(s, i, i + n);
            }
            i += n;
        }
        return b.append('"');
    }

    /**
     * What SQS counts: the body plus, for each attribute, its name, data type and value (UTF-8
     * bytes).
     */
    static int size(String body, Map<String, MessageAttributeValue> attributes) {
        long total = utf8Length(body);
        for (Map.Entry<String, MessageAttributeValue> e : attributes.entrySet()) {
            total +=
                    utf8Length(e.getKey())
                            + utf8Length(e.getValue().dataType())
                            + utf8Length(e.getValue().stringValue());
        }
        return (int) Math.min(Integer.MAX_VALUE, total);
    }

    static int utf8Length(String s) {
        int bytes = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }
}
