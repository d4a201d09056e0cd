package io.outbox4j.api;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Publishes messages to one external transport. It is handed messages in batches so that an adapter
 * can pipeline them (Kafka futures, RabbitMQ confirms, SQS batches) and reports one outcome per
 * message.
 *
 * <p>Rules an implementation follows:
 *
 * <ul>
 *   <li>{@link PublishOutcome#published()} only once the broker has taken durable responsibility.
 *   <li>The message id is the downstream idempotency key: it travels with the published message.
 *   <li>The call returns within {@code timeout}; anything not acknowledged by then is a failure.
 *   <li>Messages sharing a key arrive in their order; a relay never hands two of them to concurrent
 *       calls.
 *   <li>A failure is retryable unless it is (or is caused by) a {@link PermanentFailureException};
 *       a {@link RetryAfterException} sets a minimum retry delay.
 *   <li>Calls may come from several threads at once.
 * </ul>
 *
 * A publisher that throws instead of returning outcomes fails every message of the call.
 *
 * <h2>Threads and the deadline</h2>
 *
 * The relay calls {@code publish} on a thread of its own pool (one hand-off per call) and enforces
 * {@code timeout} itself: a call that has not returned by then is cancelled (its thread
 * interrupted) and every message of it counts as failed and is retried. An adapter therefore needs
 * no thread of its own to keep the deadline, and should not add one (each hand-off costs a context
 * switch per call): it sends on the calling thread, bounds each blocking step by what is left of
 * {@code timeout} (the client library's own send and acknowledgement timeouts), returns the
 * outcomes known at the deadline, and returns promptly when interrupted. A call that ignores the
 * interrupt is not waited for: its messages were already reported failed, so anything it still
 * delivers is a duplicate, which at-least-once delivery allows.
 */
public interface Publisher extends AutoCloseable {
    /**
     * Publishes a batch.
     *
     * @param messages the messages, not empty
     * @param timeout how long the call may take in all
     * @return one outcome per message, in the same order as {@code messages}
     */
    List<PublishOutcome> publish(List<Message> messages, Duration timeout);

    /**
     * The argument checks of {@link #publish}, made by every publisher of outbox4j before it
     * touches its transport, with the same messages; an adapter of your own can make them too.
     *
     * @param messages the messages, none null (may be empty)
     * @param timeout how long the call may take in all, positive
     * @throws IllegalArgumentException if {@code messages} is null or holds null, or {@code
     *     timeout} is null or not positive
     */
    static void checkArguments(
            @Nullable List<? extends @Nullable Message> messages, @Nullable Duration timeout) {
        List<? extends @Nullable Message> all = Checks.notNull(messages, "messages");
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i) == null) {
                throw new IllegalArgumentException("messages[" + i + "] must not be null");
            }
        }
        Checks.positive(timeout, "timeout");
    }

    /**
     * Applies an adapter's mapping function (message to destination: topic, queue, exchange) under
     * the rule every publisher of outbox4j follows: the destination is a property of the message,
     * so whatever the function throws fails that message permanently (it would throw again on every
     * retry) and the message goes to the dead letter. The one exception is a {@link
     * RetryAfterException} thrown on purpose, which retries the message no earlier than its delay;
     * a {@link PermanentFailureException} is passed on as it is too. An adapter of your own can
     * follow the same rule; what it then does with the destination (a null, or one its broker can
     * never accept, fails permanently as well) is its own.
     *
     * @param mapper the application's mapping function
     * @param setting the name of the setting that took the function ({@code "topicMapper"}), for
     *     the reason of the failure
     * @param message the message to map
     * @param <T> the destination type
     * @return what the function returned, possibly null
     * @throws PermanentFailureException if the function threw anything but a {@link
     *     RetryAfterException}
     * @throws RetryAfterException if the function threw one
     */
    static <T> @Nullable T applyMapper(
            Function<? super Message, ? extends @Nullable T> mapper,
            String setting,
            Message message) {
        try {
            return mapper.apply(message);
        } catch (PermanentFailureException | RetryAfterException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new PermanentFailureException(
                    setting
                            + " threw for message '"
                            + message.id()
                            + "' (topic '"
                            + message.topic()
                            + "'): "
                            + e
                            + "; it would throw again on every retry",
                    e);
        }
    }

    /** Releases the transport's resources. The default does nothing. */
    @Override
    default void close() {}

    /**
     * Adapts a function that sends one message at a time into a publisher: messages of a batch are
     * sent one after the other, each outcome taken from whether the send returned or threw.
     *
     * @param sender sends one message and returns once the broker accepted it, or throws
     * @return a publisher calling {@code sender} for each message
     */
    static Publisher perMessage(Sender sender) {
        Checks.notNull(sender, "sender");
        return (messages, timeout) -> {
            List<PublishOutcome> outcomes = new ArrayList<>(messages.size());
            for (Message m : messages) {
                PublishOutcome outcome;
                try {
                    sender.send(m);
                    outcome = PublishOutcome.published();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    outcome = PublishOutcome.failed(e);
                } catch (Exception e) {
                    outcome = PublishOutcome.failed(e);
                }
                outcomes.add(outcome);
            }
            return outcomes;
        };
    }

    /** Sends one message; see {@link Publisher#perMessage(Sender)}. */
    @FunctionalInterface
    interface Sender {
        /**
         * Sends one message and returns once the broker has accepted it.
         *
         * @param message the message
         * @throws Exception if it was not accepted
         */
        void send(Message message) throws Exception;
    }
}
