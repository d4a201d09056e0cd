package io.outbox4j.publisher.kafka;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.NotEnoughReplicasAfterAppendException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;

/**
 * Decides which Kafka errors no retry can fix. Only errors about the record or its destination are
 * permanent; everything else (unreachable broker, timeouts, not enough replicas, unknown server
 * errors, authentication, unsupported versions, a closed producer) is retryable, so a broker or
 * configuration problem never dead-letters a healthy message: at worst the relay's attempt limit
 * does. Kafka's exceptions never reach the relay bare: each is the cause of a {@link
 * PermanentFailureException} or a {@link RetryableFailureException} that names the message.
 */
final class Failures {
    private Failures() {}

    /**
     * Maps a send failure to the cause reported in the outcome: an outbox exception as it is, a
     * Kafka error wrapped in a permanent or a retryable failure.
     *
     * @param topic the Kafka topic, or null when the record could not be built
     */
    static Throwable classify(Message m, @Nullable String topic, Throwable error) {
        Throwable e = error;
        while ((e instanceof ExecutionException || e instanceof CompletionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof OutboxException || e instanceof Error) {
            return e;
        }
        String forTopic = topic == null ? "" : " for topic '" + topic + "'";
        String reason = permanentReason(e);
        if (reason == null) {
            String what = transientReason(e, topic);
            return new RetryableFailureException(
                    "Kafka did not take message '"
                            + m.id()
                            + "'"
                            + forTopic
                            + (what == null ? "" : " (" + what + ")")
                            + ": "
                            + e.getClass().getSimpleName()
                            + ": "
                            + e.getMessage(),
                    e);
        }
        return new PermanentFailureException(
                "Kafka refused message '"
                        + m.id()
                        + "'"
                        + forTopic
                        + " permanently ("
                        + reason
                        + "): "
                        + e.getClass().getSimpleName()
                        + ": "
                        + e.getMessage(),
                e);
    }

    /**
     * What a retryable Kafka error means, in the words of the transport's problem: an unknown
     * topic, a broker that cannot be reached, a lost connection, a record that waited for its
     * acknowledgement too long. Null when the error's own text says it best.
     */
    private static @Nullable String transientReason(Throwable e, @Nullable String topic) {
        String text = e.getMessage() == null ? "" : e.getMessage();
        if (e instanceof UnknownTopicOrPartitionException) {
            return "unknown topic '" + topic + "'";
        }
        if (e instanceof org.apache.kafka.common.errors.TimeoutException) {
            if (text.contains("not present in metadata")) {
                return "unknown topic '"
                        + topic
                        + "', or no broker reachable: the topic is not in the metadata"
                        + millis(text)
                        + "; check the topic exists and bootstrap.servers";
            }
            if (text.contains("since batch creation") || text.startsWith("Expiring")) {
                return "no broker acknowledged it within delivery.timeout.ms"
                        + millis(text)
                        + "; the broker is down, unreachable or too slow";
            }
            return "timed out";
        }
        if (e instanceof NetworkException) {
            return "connection to the broker lost";
        }
        if (e instanceof NotEnoughReplicasException
                || e instanceof NotEnoughReplicasAfterAppendException) {
            return "not enough in-sync replicas for acks=all";
        }
        if (e instanceof AuthenticationException) {
            return "authentication failed";
        }
        return null;
    }

    /** " (3.7s)" from the last "N ms" in Kafka's text, or "". */
    private static String millis(String text) {
        Matcher m = MILLIS.matcher(text);
        String found = null;
        while (m.find()) {
            found = m.group(1);
        }
        if (found == null) {
            return "";
        }
        return " (" + format(Duration.ofMillis(Long.parseLong(found))) + ")";
    }

    /** A duration as text: {@code 250ms}, {@code 2s}, {@code 2.5s}, {@code 90s}. */
    static String format(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms / 1000.0 + "s";
    }

    private static final Pattern MILLIS = Pattern.compile("(\\d+) ?ms\\b");

    /**
     * Adds why no broker answers to the retryable failures that ran out of time (Kafka expired the
     * record, or the call's own deadline passed), when the bootstrap brokers cannot be reached: "…;
     * no broker reachable: connection refused by 127.0.0.1:9092". Other outcomes are returned as
     * they are.
     */
    static List<PublishOutcome> diagnose(
            List<PublishOutcome> outcomes, @Nullable BrokerProbe probe) {
        if (probe == null) {
            return outcomes;
        }
        List<PublishOutcome> out = new ArrayList<>(outcomes.size());
        String unreachable = null;
        boolean probed = false;
        for (PublishOutcome o : outcomes) {
            Throwable f = o.failure().orElse(null);
            if (f instanceof RetryableFailureException r && timedOut(r)) {
                if (!probed) {
                    unreachable = probe.unreachable();
                    probed = true;
                }
                if (unreachable != null) {
                    o =
                            PublishOutcome.failed(
                                    new RetryableFailureException(
                                            r.getMessage()
                                                    + "; no broker reachable: "
                                                    + unreachable,
                                            r.getCause()));
                }
            }
            out.add(o);
        }
        return out;
    }

    private static boolean timedOut(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.util.concurrent.TimeoutException
                    || t instanceof org.apache.kafka.common.errors.TimeoutException
                    || t instanceof org.apache.kafka.common.errors.InterruptException) {
                return true;
            }
        }
        return false;
    }

    private static @Nullable String permanentReason(Throwable e) {
        if (e instanceof RecordTooLargeException || e instanceof RecordBatchTooLargeException) {
            return "record too large";
        }
        if (e instanceof InvalidTopicException) {
            return "invalid topic";
        }
        if (e instanceof InvalidRecordException) {
            return "invalid record";
        }
        if (e instanceof AuthorizationException) {
            return "not authorized";
        }
        if (e instanceof SerializationException) {
            return "serialization failed";
        }
        return null;
    }
}
