package io.outbox4j.publisher.sqs;

import io.outbox4j.api.Message;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlRequest;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * Maps a message to a queue name, resolves the name to a URL with GetQueueUrl once and caches it.
 * Only successes are cached: a queue that is missing now is looked up again on the next call, so
 * creating it is enough to let its messages through.
 */
final class QueueResolver {
    /**
     * 1 to 80 characters: alphanumerics, hyphens, underscores; a FIFO queue's name ends in ".fifo".
     */
    private static final Pattern QUEUE_NAME =
            Pattern.compile("[A-Za-z0-9_-]{1,75}(\\.fifo)?|[A-Za-z0-9_-]{1,80}");

    private final SqsCalls calls;
    private final Function<Message, String> queueName;
    private final Map<String, String> urls = new ConcurrentHashMap<>();

    QueueResolver(SqsCalls calls, Function<Message, String> queueName) {
        this.calls = calls;
        this.queueName = queueName;
    }

    /**
     * Returns a mapper for one publish call: it asks SQS at most once per queue name during the
     * call, and throws the same failure for every message of a queue that could not be resolved. A
     * name mapper that throws, or gives no valid queue name, fails that message permanently (see
     * {@link Publisher#applyMapper}); a queue that cannot be resolved now fails it retryably.
     */
    Function<Message, String> forCall(Deadline deadline) {
        Map<String, RuntimeException> failed = new HashMap<>();
        return m -> {
            String name = Publisher.applyMapper(queueName, "queueNameMapper", m);
            if (name == null || !QUEUE_NAME.matcher(name).matches()) {
                throw new PermanentFailureException(
                        "message '"
                                + m.id()
                                + "' (topic '"
                                + m.topic()
                                + "') maps to "
                                + (name == null ? "no queue name" : "'" + name + "'")
                                + ", which is not a valid SQS"
                                + " queue name (1-80 characters of [A-Za-z0-9_-], a FIFO queue's ending in .fifo): map it with"
                                + " SqsPublisher.builder().queueNameMapper(...) or queueMapper(...), then replay the dead"
                                + " letters");
            }
            String url = urls.get(name);
            if (url != null) {
                return url;
            }
            RuntimeException known = failed.get(name);
            if (known != null) {
                throw known;
            }
            try {
                url = lookUp(name, m.topic(), deadline);
            } catch (RuntimeException e) {
                failed.put(name, e);
                throw e;
            }
            urls.put(name, url);
            return url;
        };
    }

    /** Forgets every cached URL (the publisher is closed). */
    void clear() {
        urls.clear();
    }

    /** Forgets a URL that SQS reported missing, so the next call looks the queue up again. */
    void forget(String url) {
        urls.values().removeIf(url::equals);
    }

    private String lookUp(String name, String topic, Deadline deadline) {
        var timeouts =
                deadline.requestTimeouts()
                        .orElseThrow(
                                () ->
                                        new RetryableFailureException(
                                                "could not resolve the URL"
                                                        + " of SQS queue '"
                                                        + name
                                                        + "' within the publish timeout of "
                                                        + deadline.total()
                                                        + "; the message will be retried"));
        var request =
                GetQueueUrlRequest.builder()
                        .queueName(name)
                        .overrideConfiguration(timeouts)
                        .build();
        try {
            return calls.getQueueUrl(request)
                    .get(Math.max(1, deadline.remaining().toNanos()), TimeUnit.NANOSECONDS)
                    .queueUrl();
        } catch (ExecutionException e) {
            Throwable cause = Failures.unwrap(e);
            if (cause instanceof QueueDoesNotExistException) {
                throw new RetryableFailureException(
                        "SQS queue '"
                                + name
                                + "' does not exist (topic '"
                                + topic
                                + "' maps to it):"
                                + " create the queue or configure SqsPublisher.builder().queueNameMapper(...) or"
                                + " queueMapper(...); the message will be retried",
                        cause);
            }
            throw new RetryableFailureException(
                    "could not resolve the URL of SQS queue '"
                            + name
                            + "': "
                            + cause
                            + "; the message will be retried",
                    cause);
        } catch (TimeoutException e) {
            throw new RetryableFailureException(
                    "could not resolve the URL of SQS queue '"
                            + name
                            + "' within the publish"
                            + " timeout of "
                            + deadline.total()
                            + "; the message will be retried",
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RetryableFailureException(
                    "interrupted while resolving the URL of SQS queue '" + name + "'", e);
        }
    }
}
