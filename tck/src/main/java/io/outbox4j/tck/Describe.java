package io.outbox4j.tck;

import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Turns what a store or publisher returned into text an implementer can act on. Internal to the
 * kit.
 */
final class Describe {
    private static final int EXCERPT_BYTES = 12;

    private Describe() {}

    /** The ids of the deliveries, in the order the store returned them. */
    static List<String> ids(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> d.message().id()).collect(Collectors.toList());
    }

    /** The ids of the messages, in order. */
    static List<String> idsOf(List<Message> messages) {
        return messages.stream().map(Message::id).collect(Collectors.toList());
    }

    /** Deliveries as {@code [id (attempt n), …]}, without receipts or payloads. */
    static String deliveries(List<Delivery> deliveries) {
        return deliveries.stream()
                .map(d -> d.message().id() + " (attempt " + d.attempt() + ")")
                .collect(Collectors.joining(", ", "[", "]"));
    }

    /**
     * Lists every field in which {@code actual} differs from {@code expected}, one sentence each;
     * empty when they are equal.
     */
    static List<String> differences(Message expected, Message actual) {
        List<String> out = new ArrayList<>();
        field(out, "id", expected.id(), actual.id());
        field(out, "topic", expected.topic(), actual.topic());
        field(out, "key", expected.key(), actual.key());
        field(out, "module", expected.module(), actual.module());
        field(out, "contentType", expected.contentType(), actual.contentType());
        payload(out, "payload", expected.payload(), actual.payload());
        headers(out, expected.headers(), actual.headers());
        field(out, "occurredAt", expected.occurredAt(), actual.occurredAt());
        field(out, "notBefore", expected.notBefore(), actual.notBefore());
        return out;
    }

    private static void field(List<String> out, String name, Object expected, Object actual) {
        if (!Objects.equals(expected, actual)) {
            out.add(
                    name
                            + " was "
                            + show(expected)
                            + " when enqueued but came back as "
                            + show(actual));
        }
    }

    private static String show(Object value) {
        if (value instanceof Optional) {
            Optional<?> o = (Optional<?>) value;
            return o.isPresent() ? show(o.get()) : "absent";
        }
        return value instanceof String ? "'" + value + "'" : String.valueOf(value);
    }

    /**
     * Describes how two byte arrays differ: sizes, first differing index, and an excerpt around it.
     */
    static void payload(List<String> out, String name, byte[] expected, byte[] actual) {
        if (Arrays.equals(expected, actual)) {
            return;
        }
        int first = Arrays.mismatch(expected, actual);
        out.add(
                name
                        + " was "
                        + expected.length
                        + " bytes when enqueued but came back as "
                        + actual.length
                        + " bytes, first difference at byte "
                        + first
                        + " (expected "
                        + hex(expected, first)
                        + ", got "
                        + hex(actual, first)
                        + ")");
    }

    private static String hex(byte[] bytes, int from) {
        if (from >= bytes.length) {
            return "<end>";
        }
        StringBuilder sb = new StringBuilder();
        int to = Math.min(bytes.length, from + EXCERPT_BYTES);
        for (int i = from; i < to; i++) {
            sb.append(String.format("%02x", bytes[i] & 0xff));
            if (i + 1 < to) {
                sb.append(' ');
            }
        }
        return sb.append(to < bytes.length ? " …" : "").toString();
    }

    private static void headers(
            List<String> out, Map<String, String> expected, Map<String, String> actual) {
        if (new ArrayList<>(expected.entrySet()).equals(new ArrayList<>(actual.entrySet()))) {
            return;
        }
        if (expected.equals(actual)) {
            out.add(
                    "headers came back in another order: enqueued as "
                            + expected.keySet()
                            + " but read as "
                            + actual.keySet()
                            + " (header order must be kept)");
            return;
        }
        Map<String, String> changed = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            if (!actual.containsKey(e.getKey())) {
                changed.put(e.getKey(), "missing");
            } else if (!actual.get(e.getKey()).equals(e.getValue())) {
                changed.put(
                        e.getKey(),
                        "'" + e.getValue() + "' became '" + actual.get(e.getKey()) + "'");
            }
        }
        for (String name : actual.keySet()) {
            if (!expected.containsKey(name)) {
                changed.put(name, "added by the store");
            }
        }
        out.add("headers differ: " + changed);
    }
}
