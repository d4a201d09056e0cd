package io.outbox4j.kafka.connect;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Chooses the Kafka topic of a message: a fixed topic when one is configured; otherwise the message
 * topic, rewritten by the regex where it matches, with the prefix put before it.
 */
final class TopicMapper {
    private final @Nullable String fixed;
    private final @Nullable Pattern regex;
    private final String replacement;
    private final String prefix;

    TopicMapper(
            @Nullable String fixed,
            @Nullable Pattern regex,
            @Nullable String replacement,
            String prefix) {
        this.fixed = fixed;
        this.regex = regex;
        this.replacement = replacement == null ? "" : replacement;
        this.prefix = prefix;
    }

    String topicFor(String messageTopic) {
        if (fixed != null) {
            return fixed;
        }
        String topic = messageTopic;
        if (regex != null) {
            Matcher m = regex.matcher(topic);
            if (m.matches()) {
                topic = m.replaceFirst(replacement);
            }
        }
        return prefix + topic;
    }

    @Override
    public String toString() {
        if (fixed != null) {
            return "every message to '" + fixed + "'";
        }
        return "message topic"
                + (regex == null ? "" : " rewritten by /" + regex + "/ -> '" + replacement + "'")
                + (prefix.isEmpty() ? "" : " with prefix '" + prefix + "'");
    }
}
