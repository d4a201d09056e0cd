package io.outbox4j.publisher.sqs;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlRequest;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;

/**
 * The two SQS calls the publisher makes, over either client. The synchronous client runs the call
 * in the caller's thread and returns a completed future, so one code path serves both; an exception
 * thrown by either client comes back as a failed future, never thrown.
 */
final class SqsCalls {
    private final Function<SendMessageBatchRequest, CompletableFuture<SendMessageBatchResponse>>
            send;
    private final Function<GetQueueUrlRequest, CompletableFuture<GetQueueUrlResponse>> queueUrl;

    private SqsCalls(
            Function<SendMessageBatchRequest, CompletableFuture<SendMessageBatchResponse>> send,
            Function<GetQueueUrlRequest, CompletableFuture<GetQueueUrlResponse>> queueUrl) {
        this.send = send;
        this.queueUrl = queueUrl;
    }

    static SqsCalls of(SqsClient client) {
        return new SqsCalls(
                r -> guarded(() -> CompletableFuture.completedFuture(client.sendMessageBatch(r))),
                r -> guarded(() -> CompletableFuture.completedFuture(client.getQueueUrl(r))));
    }

    static SqsCalls of(SqsAsyncClient client) {
        return new SqsCalls(
                r -> guarded(() -> client.sendMessageBatch(r)),
                r -> guarded(() -> client.getQueueUrl(r)));
    }

    CompletableFuture<SendMessageBatchResponse> sendMessageBatch(SendMessageBatchRequest request) {
        return send.apply(request);
    }

    CompletableFuture<GetQueueUrlResponse> getQueueUrl(GetQueueUrlRequest request) {
        return queueUrl.apply(request);
    }

    private static <T> CompletableFuture<T> guarded(Supplier<CompletableFuture<T>> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
