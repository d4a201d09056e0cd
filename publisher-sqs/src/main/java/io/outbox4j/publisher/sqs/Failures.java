package io.outbox4j.publisher.sqs;

import io.outbox4j.api.InvalidMessageException;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.RetryableFailureException;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.services.sqs.model.BatchRequestTooLongException;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.InvalidAttributeNameException;
import software.amazon.awssdk.services.sqs.model.InvalidAttributeValueException;
import software.amazon.awssdk.services.sqs.model.InvalidMessageContentsException;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * Maps SQS errors to publish outcomes. The rule: only an error about the message itself is
 * permanent (a {@code Failed[]} entry with {@code SenderFault=true}, or a content error on a
 * request that held that message alone); configuration and infrastructure errors (missing queue,
 * access denied, throttling, timeouts, network) are retryable, because fixing them fixes the
 * message. An SDK exception is never reported bare: it is the cause of a {@link
 * PermanentFailureException} or a {@link RetryableFailureException} that names the message or the
 * queue.
 */
final class Failures {
    /**
     * Error codes (of the JSON and query protocols) that describe the content of a message, not the
     * request.
     */
    private static final Set<String> CONTENT_CODES =
            Set.of(
                    "MessageTooLong",
                    "InvalidMessageContents",
                    "InvalidParameterValue",
                    "InvalidAttributeName",
                    "InvalidAttributeValue",
                    "BatchRequestTooLong",
                    "AWS.SimpleQueueService.BatchRequestTooLong");

    private Failures() {}

    static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException)
                && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    /**
     * Tells whether a whole-request error is caused by the content of (one of) its entries, so that
     * sending the entries one by one isolates the culprit. ElasticMQ, for one, rejects a whole
     * batch this way when a single entry is too long.
     */
    static boolean isContentError(Throwable error) {
        if (error instanceof InvalidMessageContentsException
                || error instanceof BatchRequestTooLongException
                || error instanceof InvalidAttributeNameException
                || error instanceof InvalidAttributeValueException) {
            return true;
        }
        if (error instanceof AwsServiceException e) {
            return e.statusCode() >= 400
                    && e.statusCode() < 500
                    && e.awsErrorDetails() != null
                    && CONTENT_CODES.contains(e.awsErrorDetails().errorCode());
        }
        return false;
    }

    /** The failure of an entry SQS listed in {@code Failed[]}. */
    static RuntimeException ofEntry(
            BatchResultErrorEntry failed, String messageId, String queueUrl) {
        String text =
                "SQS "
                        + (Boolean.TRUE.equals(failed.senderFault())
                                ? "rejected"
                                : "failed to store")
                        + " message '"
                        + messageId
                        + "' for "
                        + queueUrl
                        + ": "
                        + failed.code()
                        + (failed.message() == null ? "" : " (" + failed.message() + ")");
        return Boolean.TRUE.equals(failed.senderFault())
                ? new PermanentFailureException(
                        text + "; SenderFault=true, so a retry cannot succeed")
                : new RetryableFailureException(text + "; the message will be retried");
    }

    /**
     * The failure of every entry of a request that failed as a whole.
     *
     * @param alone whether the request held a single entry (then a content error is that message's
     *     own fault)
     */
    static RuntimeException ofRequest(
            Throwable error, String queueUrl, int entries, boolean alone) {
        if (alone && isContentError(error)) {
            return new InvalidMessageException(
                    "SQS rejected the message for " + queueUrl + ": " + error.getMessage(), error);
        }
        if (error instanceof QueueDoesNotExistException) {
            return new RetryableFailureException(
                    "SQS queue "
                            + queueUrl
                            + " does not exist: create it or fix the queueMapper;"
                            + " the message will be retried",
                    error);
        }
        return new RetryableFailureException(
                "SendMessageBatch of "
                        + entries
                        + " message(s) to "
                        + queueUrl
                        + " failed: "
                        + error
                        + "; the message(s) will be retried",
                error);
    }
}
