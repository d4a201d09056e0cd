package io.outbox4j.publisher.kafka;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.RetryableFailureException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.SerializationException;

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
    static Throwable classify(Message m, String topic, Throwable error) {
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
            return new RetryableFailureException(
                    "Kafka did not take message '"
                            + m.id()
                            + "'"
                            + forTopic
                            + ": "
                            + e.getClass().getSimpleName()
                            + ": "
                            + e.getMessage()
                            + "; it will be retried",
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

    private static String permanentReason(Throwable e) {
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
