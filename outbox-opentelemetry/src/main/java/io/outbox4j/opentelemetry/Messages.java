package io.outbox4j.opentelemetry;

import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import java.util.Map;

/** Copies of messages with other headers. */
final class Messages {
    private Messages() {}

    /**
     * The message with the given headers, or itself when they are its own already. The message was
     * checked against its own limits when it was built; its copy with two short trace headers more
     * is not checked against the default limits again.
     *
     * @throws IllegalArgumentException if a header is not allowed in a message
     */
    static Message withHeaders(Message m, Map<String, String> headers) {
        if (headers.equals(m.headers())) {
            return m;
        }
        return m.toBuilder().headers(headers).limits(MessageLimits.UNLIMITED).build();
    }
}
