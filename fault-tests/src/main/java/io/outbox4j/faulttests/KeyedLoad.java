package io.outbox4j.faulttests;

import io.outbox4j.api.Message;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A run's messages: {@code messages} messages over {@code keys} keys, message {@code seq} (0-based,
 * also its enqueue order) with key {@code key-<seq % keys>}, id {@code <run>-<seq>} and the
 * sequence number in the {@value #SEQ_HEADER} header. Within a key the sequence numbers rise in
 * enqueue order, so a consumer can tell order from the numbers alone.
 *
 * @param run a prefix that makes the ids unique to the run
 * @param topic the topic of every message
 * @param messages how many messages
 * @param keys how many keys
 */
public record KeyedLoad(String run, String topic, int messages, int keys) {
    /** The header carrying the sequence number. */
    public static final String SEQ_HEADER = "seq";

    private static final Instant OCCURRED = Instant.parse("2026-12-01T00:00:00Z");

    /**
     * Checks the load.
     *
     * @throws IllegalArgumentException if a count is below 1 or a name is blank
     */
    public KeyedLoad {
        if (run == null || run.isBlank() || run.contains("-")) {
            throw new IllegalArgumentException(
                    "run must be non-blank without '-', but was '" + run + "'");
        }
        if (topic == null || topic.isBlank()) {
            throw new IllegalArgumentException("topic must not be blank");
        }
        if (messages < 1 || keys < 1) {
            throw new IllegalArgumentException(
                    "messages and keys must be >= 1, but were " + messages + " and " + keys);
        }
    }

    /** The message with sequence number {@code seq}. */
    public Message message(int seq) {
        return Message.builder()
                .id(id(seq))
                .topic(topic)
                .key(key(seq))
                .module("fault-tests")
                .contentType("application/json")
                .payload("{\"seq\":" + seq + "}")
                .header(SEQ_HEADER, Integer.toString(seq))
                .occurredAt(OCCURRED.plusMillis(seq))
                .build();
    }

    /** All messages in enqueue order. */
    public List<Message> all() {
        List<Message> all = new ArrayList<>(messages);
        for (int i = 0; i < messages; i++) {
            all.add(message(i));
        }
        return all;
    }

    /** The id of message {@code seq}. */
    public String id(int seq) {
        return run + "-" + seq;
    }

    /** The key of message {@code seq}. */
    public String key(int seq) {
        return "key-" + (seq % keys);
    }

    /**
     * Returns the sequence number in a payload of {@link #message(int)} ({@code {"seq":N}}).
     *
     * @param payload the payload as the consumer read it
     * @return the sequence number, or -1 if it is not such a payload
     */
    public static int seqOfPayload(byte[] payload) {
        String s = new String(payload, java.nio.charset.StandardCharsets.UTF_8);
        int colon = s.indexOf(':');
        int end = s.indexOf('}');
        if (!s.startsWith("{\"seq\":") || colon < 0 || end < colon) {
            return -1;
        }
        try {
            return Integer.parseInt(s.substring(colon + 1, end).trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Returns the sequence number of one of this load's ids.
     *
     * @param id a message id of this run
     * @return its sequence number, or -1 if the id is not of this run
     */
    public int seqOf(String id) {
        if (id == null || !id.startsWith(run + "-")) {
            return -1;
        }
        try {
            return Integer.parseInt(id.substring(run.length() + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
