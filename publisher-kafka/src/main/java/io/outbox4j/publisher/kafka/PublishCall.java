package io.outbox4j.publisher.kafka;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InterruptException;
import org.jspecify.annotations.Nullable;

/**
 * One {@code publish} call, run on the caller's thread: the records, one acknowledgement future per
 * message, the send loop (its blocking steps bounded by a {@link DeadlineInterrupt}) and the
 * bounded wait for the acknowledgements.
 */
final class PublishCall {
    private final List<Message> messages;
    private final List<ProducerRecord<byte[], byte[]>> records;
    private final List<CompletableFuture<RecordMetadata>> acks;
    private final Duration timeout;

    PublishCall(List<Message> messages, Function<Message, String> topicMapper, Duration timeout) {
        this.messages = List.copyOf(messages);
        this.timeout = timeout;
        this.records = new ArrayList<>(messages.size());
        this.acks = new ArrayList<>(messages.size());
        for (Message m : this.messages) {
            CompletableFuture<RecordMetadata> ack = new CompletableFuture<>();
            ProducerRecord<byte[], byte[]> record = null;
            try {
                record = Records.toRecord(m, Records.topic(m, topicMapper));
            } catch (RuntimeException e) { // the mapping's verdict, already an outbox exception
                ack.completeExceptionally(e);
            }
            records.add(record);
            acks.add(ack);
        }
    }

    /**
     * Hands every record to the producer, then flushes it so the batch does not wait for {@code
     * linger.ms}. Stops handing records over once the deadline ({@link System#nanoTime()}) passed,
     * the thread was interrupted (a blocked send or flush then ends with Kafka's {@link
     * InterruptException}) or the publisher closed; the acknowledgements of records already handed
     * over are left to {@link #await}. Never throws but an {@link Error}.
     */
    void send(Producer<byte[], byte[]> producer, BooleanSupplier closed, long deadline) {
        int sent = 0;
        try {
            for (int i = 0; i < records.size(); i++) {
                CompletableFuture<RecordMetadata> ack = acks.get(i);
                if (ack.isDone()) {
                    continue;
                }
                String stop = stopReason(closed, deadline);
                if (stop != null) {
                    notHandedOver(
                            i,
                            stop,
                            System.nanoTime() - deadline >= 0 ? new TimeoutException(stop) : null);
                    continue;
                }
                try {
                    // the callback completes the ack, with the error if the send failed
                    var unused =
                            producer.send(
                                    records.get(i),
                                    (metadata, error) -> {
                                        if (error == null) {
                                            ack.complete(metadata);
                                        } else {
                                            ack.completeExceptionally(error);
                                        }
                                    });
                    sent++;
                } catch (InterruptException e) {
                    // blocked for metadata or buffer space until the deadline or an interrupt
                    // (Kafka set the interrupt status again): this record was not appended, and
                    // the loop's next turns stop the rest
                    notHandedOver(
                            i,
                            Objects.requireNonNullElse(
                                    stopReason(closed, deadline), "the call was interrupted"),
                            e);
                } catch (RuntimeException e) {
                    ack.completeExceptionally(e);
                }
            }
            if (sent > 0) {
                producer.flush();
            }
        } catch (InterruptException e) {
            // the flush was cut short: await() reports what was not acknowledged
        } catch (RuntimeException | Error e) {
            acks.forEach(a -> a.completeExceptionally(e));
            if (e instanceof Error error) {
                throw error;
            }
        }
    }

    /** Why no further record may be handed to the producer, or null if one may. */
    private @Nullable String stopReason(BooleanSupplier closed, long deadline) {
        if (closed.getAsBoolean()) {
            return "the KafkaPublisher was closed";
        }
        if (System.nanoTime() - deadline >= 0) {
            return "the call's timeout of " + Failures.format(timeout) + " passed first";
        }
        return Thread.currentThread().isInterrupted() ? "the call was interrupted" : null;
    }

    /** Fails record {@code i}, never handed to the producer; {@code cause} may be null. */
    private void notHandedOver(int i, String why, @Nullable Throwable cause) {
        acks.get(i)
                .completeExceptionally(
                        new RetryableFailureException(
                                "message '"
                                        + messages.get(i).id()
                                        + "' was not handed to the Kafka producer: "
                                        + why,
                                cause));
    }

    /**
     * Waits for every acknowledgement until the deadline ({@link System#nanoTime()}) and maps each
     * to an outcome.
     */
    List<PublishOutcome> await(long deadline) {
        List<PublishOutcome> outcomes = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            CompletableFuture<RecordMetadata> ack = acks.get(i);
            PublishOutcome outcome;
            try {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0 && !ack.isDone()) {
                    throw new TimeoutException();
                }
                ack.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
                outcome = PublishOutcome.published();
            } catch (ExecutionException e) {
                outcome =
                        PublishOutcome.failed(
                                Failures.classify(
                                        m, topicOf(i), e.getCause() != null ? e.getCause() : e));
            } catch (TimeoutException e) {
                outcome =
                        PublishOutcome.failed(
                                new RetryableFailureException(
                                        "message '"
                                                + m.id()
                                                + "' was not acknowledged by Kafka"
                                                + forTopic(i)
                                                + " within "
                                                + Failures.format(timeout)
                                                + "; it may still arrive",
                                        e));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                outcome =
                        PublishOutcome.failed(
                                new RetryableFailureException(
                                        "interrupted while waiting for Kafka to acknowledge message '"
                                                + m.id()
                                                + "'"
                                                + forTopic(i),
                                        e));
            }
            outcomes.add(outcome);
        }
        return outcomes;
    }

    /**
     * Every message fails with the same cause (the publisher is closed, say), unless its record
     * could not be built.
     */
    List<PublishOutcome> failAll(Throwable cause) {
        acks.forEach(ack -> ack.completeExceptionally(cause));
        return await(System.nanoTime());
    }

    private String forTopic(int i) {
        String topic = topicOf(i);
        return topic == null ? "" : " for topic '" + topic + "'";
    }

    private @Nullable String topicOf(int i) {
        ProducerRecord<byte[], byte[]> r = records.get(i);
        return r == null ? null : r.topic();
    }
}
