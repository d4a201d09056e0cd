package io.outbox4j.publisher.sqs;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryableFailureException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResultEntry;

/**
 * One {@link SqsPublisher#publish} call: resolve and encode every message, split each queue's
 * messages into SendMessageBatch requests, send them (a standard queue's requests all at once, a
 * FIFO queue's one after the other), and collect one outcome per message before the deadline.
 */
final class PublishCall {
    /** SQS takes at most this many entries in one SendMessageBatch. */
    static final int MAX_BATCH_ENTRIES = 10;

    private final SqsCalls calls;
    private final EntryEncoder encoder;
    private final QueueResolver resolver;
    private final int maxRequestBytes;
    private final Deadline deadline;
    private final BooleanSupplier closed;
    private final AtomicReferenceArray<PublishOutcome> outcomes;
    private final Queue<CompletableFuture<?>> inFlight = new ConcurrentLinkedQueue<>();

    /**
     * Set once the call has returned (timeout) or was interrupted: nothing may be sent after that.
     */
    private volatile boolean abandoned;

    PublishCall(
            SqsCalls calls,
            EntryEncoder encoder,
            QueueResolver resolver,
            int maxRequestBytes,
            Deadline deadline,
            BooleanSupplier closed,
            int size) {
        this.calls = calls;
        this.encoder = encoder;
        this.resolver = resolver;
        this.maxRequestBytes = maxRequestBytes;
        this.deadline = deadline;
        this.closed = closed;
        this.outcomes = new AtomicReferenceArray<>(size);
    }

    /**
     * Publishes the messages.
     *
     * @param queueUrlOf the queue URL of a message; what it throws becomes that message's outcome
     */
    List<PublishOutcome> run(List<Message> messages, Function<Message, String> queueUrlOf) {
        Map<String, List<EntryEncoder.Entry>> byQueue = new LinkedHashMap<>();
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            try {
                String url = queueUrlOf.apply(m);
                byQueue.computeIfAbsent(url, u -> new ArrayList<>()).add(encoder.encode(i, m, url));
            } catch (RuntimeException e) {
                outcomes.set(i, PublishOutcome.failed(e));
            }
        }
        List<CompletableFuture<Void>> sends = new ArrayList<>();
        byQueue.forEach(
                (url, entries) -> {
                    QueueSender sender = new QueueSender(url);
                    List<List<EntryEncoder.Entry>> requests = split(entries, maxRequestBytes);
                    if (EntryEncoder.isFifo(url)) {
                        // One request after the other: a later request of a group must not overtake
                        // an earlier one.
                        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
                        for (List<EntryEncoder.Entry> request : requests) {
                            chain = chain.thenCompose(v -> sender.send(request));
                        }
                        sends.add(chain);
                    } else {
                        requests.forEach(request -> sends.add(sender.send(request)));
                    }
                });
        await(sends);
        List<PublishOutcome> result = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            PublishOutcome o = outcomes.get(i);
            result.add(
                    o != null
                            ? o
                            : PublishOutcome.failed(
                                    new RetryableFailureException(
                                            "SQS did not answer for message '"
                                                    + messages.get(i).id()
                                                    + "' within the publish timeout of "
                                                    + deadline.total()
                                                    + "; it may still arrive, and will be retried",
                                            new TimeoutException())));
        }
        return result;
    }

    /**
     * Cuts a queue's entries, in order, into requests of at most 10 entries and {@code maxBytes} in
     * all.
     */
    static List<List<EntryEncoder.Entry>> split(List<EntryEncoder.Entry> entries, int maxBytes) {
        List<List<EntryEncoder.Entry>> requests = new ArrayList<>();
        List<EntryEncoder.Entry> current = new ArrayList<>();
        long bytes = 0;
        for (EntryEncoder.Entry e : entries) {
            if (!current.isEmpty()
                    && (current.size() == MAX_BATCH_ENTRIES || bytes + e.bytes() > maxBytes)) {
                requests.add(current);
                current = new ArrayList<>();
                bytes = 0;
            }
            current.add(e);
            bytes += e.bytes();
        }
        if (!current.isEmpty()) {
            requests.add(current);
        }
        return requests;
    }

    private void await(List<CompletableFuture<Void>> sends) {
        CompletableFuture<Void> all =
                CompletableFuture.allOf(sends.toArray(new CompletableFuture<?>[0]));
        try {
            all.get(Math.max(1, deadline.remaining().toNanos()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            abandoned = true;
            inFlight.forEach(f -> f.cancel(true));
        } catch (InterruptedException e) {
            abandoned = true;
            Thread.currentThread().interrupt();
            inFlight.forEach(f -> f.cancel(true));
            failUnanswered(
                    new RetryableFailureException(
                            "interrupted while waiting for SQS; the message will be retried", e));
        } catch (ExecutionException e) {
            // cannot happen: every send records its failures and completes normally
            failUnanswered(
                    new RetryableFailureException(
                            "unexpected failure while publishing to SQS", Failures.unwrap(e)));
        }
    }

    /** Composes a future with one handler of both its outcomes (Java 17 has no handleCompose). */
    @SuppressWarnings("FutureReturnValueIgnored") // the nested future is flattened at once
    private static <T, U> CompletableFuture<U> handleCompose(
            CompletableFuture<T> f,
            BiFunction<? super T, Throwable, ? extends CompletionStage<U>> handler) {
        return f.handle(handler).thenCompose(Function.identity());
    }

    private void failUnanswered(RuntimeException cause) {
        for (int i = 0; i < outcomes.length(); i++) {
            outcomes.compareAndSet(i, null, PublishOutcome.failed(cause));
        }
    }

    private void record(EntryEncoder.Entry e, PublishOutcome outcome) {
        outcomes.compareAndSet(e.index(), null, outcome);
    }

    /**
     * Sends the requests of one queue; for a FIFO queue, stops a group at its first retryable
     * failure.
     */
    private final class QueueSender {
        private final String url;
        private final boolean fifo;
        private final Set<String> stoppedGroups =
                new HashSet<>(); // FIFO only; touched by one request at a time

        QueueSender(String url) {
            this.url = url;
            this.fifo = EntryEncoder.isFifo(url);
        }

        /**
         * Sends one request; the future always completes normally, every outcome being recorded.
         */
        CompletableFuture<Void> send(List<EntryEncoder.Entry> request) {
            List<EntryEncoder.Entry> live = new ArrayList<>(request.size());
            for (EntryEncoder.Entry e : request) {
                if (fifo && stoppedGroups.contains(e.groupId())) {
                    record(
                            e,
                            PublishOutcome.failed(
                                    new RetryableFailureException(
                                            "message '"
                                                    + e.message().id()
                                                    + "' was not"
                                                    + " sent: an earlier message of its FIFO group failed in this publish call, and sending this one"
                                                    + " first would break the group's order; it will be retried")));
                } else {
                    live.add(e);
                }
            }
            if (live.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            if (abandoned || Thread.currentThread().isInterrupted() || closed.getAsBoolean()) {
                String why =
                        closed.getAsBoolean()
                                ? "the SqsPublisher was closed"
                                : "the publish call was interrupted or gave up";
                notSent(live, why);
                return CompletableFuture.completedFuture(null);
            }
            var timeouts = deadline.requestTimeouts();
            if (timeouts.isEmpty()) {
                notSent(live, "the publish timeout of " + deadline.total() + " passed first");
                return CompletableFuture.completedFuture(null);
            }
            List<SendMessageBatchRequestEntry> entries = new ArrayList<>(live.size());
            live.forEach(e -> entries.add(e.request()));
            var call =
                    calls.sendMessageBatch(
                            SendMessageBatchRequest.builder()
                                    .queueUrl(url)
                                    .entries(entries)
                                    .overrideConfiguration(timeouts.get())
                                    .build());
            inFlight.add(call);
            return handleCompose(
                            call,
                            (response, error) ->
                                    error == null
                                            ? answered(live, response)
                                            : failed(live, Failures.unwrap(error)))
                    .exceptionally(
                            t -> { // a bug of ours must still leave every message with an outcome
                                live.forEach(
                                        e ->
                                                fail(
                                                        e,
                                                        new RetryableFailureException(
                                                                "publishing to SQS failed unexpectedly",
                                                                t)));
                                return null;
                            });
        }

        private CompletableFuture<Void> answered(
                List<EntryEncoder.Entry> live, SendMessageBatchResponse response) {
            Map<String, EntryEncoder.Entry> byId = new HashMap<>();
            live.forEach(e -> byId.put(e.entryId(), e));
            for (SendMessageBatchResultEntry ok : response.successful()) {
                EntryEncoder.Entry e = byId.remove(ok.id());
                if (e != null) {
                    record(e, PublishOutcome.published());
                }
            }
            for (BatchResultErrorEntry failed : response.failed()) {
                EntryEncoder.Entry e = byId.remove(failed.id());
                if (e != null) {
                    fail(e, Failures.ofEntry(failed, e.message().id(), url));
                }
            }
            // Every entry is in Successful[] or Failed[]; one in neither was not confirmed, so it
            // is retried.
            live.stream()
                    .filter(e -> byId.containsKey(e.entryId()))
                    .forEach(
                            e ->
                                    fail(
                                            e,
                                            new RetryableFailureException(
                                                    "SQS's answer did not mention message '"
                                                            + e.message().id()
                                                            + "'; it will be retried")));
            return CompletableFuture.completedFuture(null);
        }

        private CompletableFuture<Void> failed(List<EntryEncoder.Entry> live, Throwable error) {
            if (error instanceof QueueDoesNotExistException) {
                resolver.forget(url);
            }
            if (live.size() > 1 && Failures.isContentError(error)) {
                // One entry spoiled the whole request: send them one by one so only the culprit
                // fails.
                CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
                for (EntryEncoder.Entry e : live) {
                    chain = chain.thenCompose(v -> send(List.of(e)));
                }
                return chain;
            }
            RuntimeException failure =
                    Failures.ofRequest(error, url, live.size(), live.size() == 1);
            live.forEach(e -> fail(e, failure));
            return CompletableFuture.completedFuture(null);
        }

        /** Fails the entries that were not sent, for {@code why}, to be retried. */
        private void notSent(List<EntryEncoder.Entry> entries, String why) {
            entries.forEach(
                    e ->
                            fail(
                                    e,
                                    new RetryableFailureException(
                                            "message '"
                                                    + e.message().id()
                                                    + "' was not sent: "
                                                    + why
                                                    + "; it will be retried")));
        }

        private void fail(EntryEncoder.Entry e, RuntimeException failure) {
            PublishOutcome outcome = PublishOutcome.failed(failure);
            if (fifo && !outcome.isPermanent()) {
                stoppedGroups.add(e.groupId());
            }
            record(e, outcome);
        }
    }
}
