package io.outbox4j.publisher.sqs;

import io.outbox4j.api.Message;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.RetryAfterException;
import java.util.function.Function;

/**
 * Calls a user's mapping function under the rule every outbox4j publisher follows: the destination
 * is a property of the message, so whatever the function throws fails that message permanently (it
 * would throw again on every retry), except a {@link RetryAfterException} thrown on purpose.
 */
final class Mapping {
    private Mapping() {}

    static String apply(Function<Message, String> mapper, String setting, Message m) {
        try {
            return mapper.apply(m);
        } catch (PermanentFailureException | RetryAfterException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new PermanentFailureException(
                    setting
                            + " threw for message '"
                            + m.id()
                            + "' (topic '"
                            + m.topic()
                            + "'): "
                            + e
                            + "; it would throw again on every retry",
                    e);
        }
    }
}
