package io.outbox4j.publisher.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ReturnListener;
import com.rabbitmq.client.ShutdownListener;
import com.rabbitmq.client.ShutdownSignalException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.RetryableFailureException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A channel in confirm mode that tracks its unconfirmed publishes by sequence number. Only one
 * thread publishes on it at a time (the pool hands it to one call); the connection's I/O thread
 * delivers acks, nacks, returns and the shutdown, in wire order, under this object's lock.
 *
 * <ul>
 *   <li>ack (single or {@code multiple}) → published, unless the message was returned first
 *       (unroutable);
 *   <li>nack → retryable failure;
 *   <li>shutdown (channel or connection) → every unconfirmed message fails, retryable.
 * </ul>
 */
final class ConfirmChannel implements ConfirmListener, ReturnListener, ShutdownListener {
    private static final Pattern NO_EXCHANGE = Pattern.compile("no exchange '(.*)' in vhost '.*'");

    private final Channel channel;
    private final Connection connection;
    private final Consumer<String> onMissingExchange;

    /** Unconfirmed publishes by sequence number; guarded by {@code this}. */
    private final NavigableMap<Long, Slot> unconfirmed = new TreeMap<>();

    /** Set once by the shutdown listener; guarded by {@code this}. */
    private @Nullable ShutdownSignalException closedBy;

    private ConfirmChannel(
            Channel channel, Connection connection, Consumer<String> onMissingExchange) {
        this.channel = channel;
        this.connection = connection;
        this.onMissingExchange = onMissingExchange;
    }

    /**
     * Opens a channel on the connection and puts it in confirm mode.
     *
     * @param onMissingExchange told the name of an exchange the broker closed this channel for
     *     (404)
     */
    static ConfirmChannel open(Connection connection, Consumer<String> onMissingExchange)
            throws IOException {
        Channel channel = connection.createChannel();
        if (channel == null) {
            throw new RetryableFailureException(
                    "RabbitMQ connection "
                            + connection
                            + " has no free channel (channel_max "
                            + connection.getChannelMax()
                            + " reached)");
        }
        ConfirmChannel c = new ConfirmChannel(channel, connection, onMissingExchange);
        channel.addShutdownListener(c);
        channel.addReturnListener(c);
        channel.addConfirmListener(c);
        channel.confirmSelect();
        return c;
    }

    Connection connection() {
        return connection;
    }

    synchronized boolean isUsable() {
        return closedBy == null && channel.isOpen() && connection.isOpen();
    }

    /**
     * Publishes one message with {@code mandatory=true}, registering it under its sequence number
     * first so that a confirm racing the call cannot be missed.
     */
    void publish(PublishCall call, int index, Prepared p) throws IOException {
        long seq;
        synchronized (this) {
            if (closedBy != null) {
                throw new AlreadyClosedException(closedBy);
            }
            seq = channel.getNextPublishSeqNo();
            unconfirmed.put(seq, new Slot(call, index, p));
        }
        try {
            channel.basicPublish(
                    p.destination().exchange(),
                    p.destination().routingKey(),
                    true,
                    p.properties(),
                    p.body());
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                unconfirmed.remove(seq);
            }
            throw e;
        }
    }

    @Override
    public void handleAck(long deliveryTag, boolean multiple) {
        for (Slot s : take(deliveryTag, multiple)) {
            s.call.decide(
                    s.index,
                    s.returned == null
                            ? PublishOutcome.published()
                            : PublishOutcome.failed(s.returned));
        }
    }

    @Override
    public void handleNack(long deliveryTag, boolean multiple) {
        for (Slot s : take(deliveryTag, multiple)) {
            s.call.decide(
                    s.index,
                    PublishOutcome.failed(
                            new RetryableFailureException(
                                    "RabbitMQ nacked message '"
                                            + s.prepared.messageId()
                                            + "' "
                                            + s.prepared.destination().describe()
                                            + ": the broker did not take responsibility for it (for example a queue at its x-max-length "
                                            + "with x-overflow=reject-publish, or an internal error)")));
        }
    }

    private synchronized List<Slot> take(long deliveryTag, boolean multiple) {
        List<Slot> taken = new ArrayList<>();
        if (multiple) {
            Map<Long, Slot> head = unconfirmed.headMap(deliveryTag, true);
            taken.addAll(head.values());
            head.clear();
        } else {
            Slot s = unconfirmed.remove(deliveryTag);
            if (s != null) {
                taken.add(s);
            }
        }
        return taken;
    }

    /**
     * A mandatory message no queue took. The broker sends the return before the ack of the same
     * message on the same channel, so the message is still unconfirmed here: mark the oldest such
     * publish of that id.
     */
    @Override
    public synchronized void handleReturn(
            int replyCode,
            String replyText,
            String exchange,
            String routingKey,
            AMQP.BasicProperties properties,
            byte[] body) {
        String id = properties == null ? null : properties.getMessageId();
        for (Slot s : unconfirmed.values()) {
            if (s.returned == null && s.prepared.messageId().equals(id)) {
                s.returned =
                        new RetryableFailureException(
                                "RabbitMQ returned message '"
                                        + id
                                        + "' as unroutable ("
                                        + replyCode
                                        + " "
                                        + replyText
                                        + ", exchange '"
                                        + exchange
                                        + "', routing key '"
                                        + routingKey
                                        + "'): no queue is bound for it");
                return;
            }
        }
    }

    @Override
    public void shutdownCompleted(ShutdownSignalException cause) {
        List<Slot> lost;
        synchronized (this) {
            closedBy = cause;
            lost = new ArrayList<>(unconfirmed.values());
            unconfirmed.clear();
        }
        missingExchange(cause).ifPresent(onMissingExchange);
        String reason = describe(cause);
        for (Slot s : lost) {
            s.call.decide(
                    s.index,
                    PublishOutcome.failed(
                            new RetryableFailureException(
                                    "the RabbitMQ channel closed before the "
                                            + "broker confirmed message '"
                                            + s.prepared.messageId()
                                            + "' "
                                            + s.prepared.destination().describe()
                                            + ": "
                                            + reason
                                            + "",
                                    cause)));
        }
    }

    /**
     * The exchange named by a channel closed with 404 "no exchange 'x' in vhost '/'", if that is
     * the reason.
     */
    static Optional<String> missingExchange(ShutdownSignalException cause) {
        if (cause.getReason() instanceof AMQP.Channel.Close) {
            AMQP.Channel.Close c = (AMQP.Channel.Close) cause.getReason();
            if (c.getReplyCode() == AMQP.NOT_FOUND) {
                Matcher m = NO_EXCHANGE.matcher(c.getReplyText());
                if (m.find()) {
                    return Optional.of(m.group(1));
                }
            }
        }
        return Optional.empty();
    }

    static String describe(ShutdownSignalException cause) {
        Object reason = cause.getReason();
        String who = cause.isHardError() ? "connection" : "channel";
        String by =
                cause.isInitiatedByApplication() ? "closed by the client" : "closed by the broker";
        if (reason instanceof AMQP.Channel.Close c) {
            return who + " " + by + " with " + c.getReplyCode() + " " + c.getReplyText();
        }
        if (reason instanceof AMQP.Connection.Close c) {
            return who + " " + by + " with " + c.getReplyCode() + " " + c.getReplyText();
        }
        return who + " " + by + (cause.getCause() == null ? "" : " (" + cause.getCause() + ")");
    }

    /**
     * Drops every unconfirmed publish of a call that gave up, so late confirms find nothing to
     * decide.
     */
    synchronized void forget(PublishCall call) {
        for (Iterator<Slot> it = unconfirmed.values().iterator(); it.hasNext(); ) {
            if (it.next().call == call) {
                it.remove();
            }
        }
    }

    synchronized boolean hasUnconfirmed() {
        return !unconfirmed.isEmpty();
    }

    /**
     * Closes the channel; may block while the connection is blocked, so callers run it off the
     * caller's thread.
     */
    void closeQuietly() {
        try {
            channel.abort();
        } catch (IOException | RuntimeException ignored) {
            // the channel is being discarded either way
        }
    }

    /** One unconfirmed publish. */
    private static final class Slot {
        final PublishCall call;
        final int index;
        final Prepared prepared;

        /** Set by a return before the ack; guarded by the channel's lock. */
        @Nullable RetryableFailureException returned;

        Slot(PublishCall call, int index, Prepared prepared) {
            this.call = call;
            this.index = index;
            this.prepared = prepared;
        }
    }
}
