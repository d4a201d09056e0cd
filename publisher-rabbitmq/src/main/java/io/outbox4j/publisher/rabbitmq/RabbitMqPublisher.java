package io.outbox4j.publisher.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ConnectionFactory;
import io.outbox4j.api.InvalidMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryAfterException;
import io.outbox4j.api.RetryableFailureException;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Publisher} that sends outbox messages to RabbitMQ and reports a message as published
 * only once the broker has confirmed it.
 *
 * <pre>{@code
 * Publisher publisher = RabbitMqPublisher.builder()
 *         .uri("amqp://user:secret@rabbit.example:5672/%2F")
 *         .exchange("orders")                 // routing key = topic; default: the default exchange ""
 *         .build();
 * }</pre>
 *
 * <p>How a batch is published:
 *
 * <ul>
 *   <li>Every message goes out with {@code mandatory=true}, persistent delivery mode, {@code
 *       message-id} = the message id, {@code content-type}, {@code timestamp} = occurredAt
 *       (seconds), {@code type} = topic, the optional {@code app-id}, and as headers the message's
 *       own headers plus the standard set of {@link OutboxHeaders#of(Message)}: {@value
 *       OutboxHeaders#ID}, {@value OutboxHeaders#TOPIC}, {@value OutboxHeaders#MODULE}, {@value
 *       OutboxHeaders#CONTENT_TYPE}, {@value OutboxHeaders#OCCURRED_AT} (ISO-8601, microseconds)
 *       and {@value OutboxHeaders#KEY} (when the message has a key).
 *   <li>A call borrows one channel in confirm mode from a small pool (a channel is never used by
 *       two calls at once), publishes the whole batch pipelined, then waits for the broker's
 *       confirms until the deadline: the smaller of the caller's {@code timeout} and {@link
 *       Builder#publishTimeout(Duration)}. The writes run on a publisher thread, so the call
 *       returns by its deadline even when a write blocks (a broker under a resource alarm stops
 *       reading).
 *   <li>Ack → published. Returned as unroutable (no queue bound), nack, channel or connection
 *       closed before the confirm, no confirm by the deadline, connection blocked by a resource
 *       alarm → a {@link RetryableFailureException} for that message. A payload over {@link
 *       Builder#maxBodyBytes(int)} or a value that does not fit an AMQP short string (255 bytes) →
 *       an {@link io.outbox4j.api.InvalidMessageException}; a destination mapper that throws or
 *       gives no valid destination (see {@link Builder#destinationMapper(Function)}) → a {@link
 *       PermanentFailureException}. A client library exception is never reported bare: it is the
 *       cause of one of these two.
 *   <li>A channel that closed (for example after publishing to an exchange that does not exist) is
 *       discarded with its unconfirmed messages failed; the next call gets a new channel. An
 *       exchange the broker closed a channel for is checked with a passive declare before anything
 *       is sent to it again: while it is missing, its messages fail (retryable) without closing the
 *       channel under the rest of their batch; once it exists they go out again. The connection is
 *       opened on first use and re-opened on the first call after it was lost; the client's
 *       automatic recovery is turned off on the publisher's private copy of the factory, so a
 *       recovered connection can never mark anything published.
 * </ul>
 *
 * Thread-safe; {@link #close()} closes the connection.
 */
public final class RabbitMqPublisher implements Publisher {
    /** RabbitMQ's default {@code max_message_size}: 128 MiB. */
    public static final int DEFAULT_MAX_BODY_BYTES = 128 * 1024 * 1024;

    /**
     * The connection name shown by the broker unless {@link Builder#connectionName(String)} sets
     * another.
     */
    public static final String DEFAULT_CONNECTION_NAME = "outbox4j-publisher";

    private static final int SHORT_STRING_MAX = 255;
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final Connector connector;
    private final Function<Message, Destination> destinationMapper;
    private final @Nullable Duration publishTimeout;
    private final @Nullable String appId;
    private final int maxBodyBytes;
    private final ThreadPoolExecutor writers;
    private volatile boolean closed;

    private RabbitMqPublisher(Builder b) {
        ConnectionFactory factory = Objects.requireNonNull(b.factory, "checked by build()").clone();
        factory.setAutomaticRecoveryEnabled(false);
        factory.setTopologyRecoveryEnabled(false);
        this.connector = new Connector(factory, b.connectionName);
        String exchange = b.exchange == null ? "" : b.exchange;
        this.destinationMapper =
                b.mapper != null ? b.mapper : m -> new Destination(exchange, m.topic());
        this.publishTimeout = b.publishTimeout;
        this.appId = b.appId;
        this.maxBodyBytes = b.maxBodyBytes;
        String prefix = "outbox4j-rabbitmq-" + INSTANCES.incrementAndGet() + "-writer-";
        AtomicInteger threads = new AtomicInteger();
        this.writers =
                new ThreadPoolExecutor(
                        0,
                        Integer.MAX_VALUE,
                        60,
                        TimeUnit.SECONDS,
                        new SynchronousQueue<>(),
                        r -> {
                            Thread t = new Thread(r, prefix + threads.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        });
    }

    /**
     * Starts a publisher configuration.
     *
     * @return a new builder; {@link Builder#connectionFactory(ConnectionFactory)} or {@link
     *     Builder#uri(String)} is required
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Publishes a batch pipelined on one confirm channel and waits for the confirms until the
     * deadline.
     *
     * @param messages the messages; an empty list returns an empty list
     * @param timeout how long the call may take in all, positive
     * @return one outcome per message, in the order of {@code messages}
     * @throws IllegalArgumentException if {@code messages}, one of them, or {@code timeout} is
     *     null, or the timeout is not positive
     */
    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        Publisher.checkArguments(messages, timeout);
        if (messages.isEmpty()) {
            return List.of();
        }
        long start = System.nanoTime();
        Duration limit =
                publishTimeout != null && publishTimeout.compareTo(timeout) < 0
                        ? publishTimeout
                        : timeout;
        long deadline = start + saturatedNanos(limit);

        PublishCall call = new PublishCall(messages.size());
        Prepared[] prepared = new Prepared[messages.size()];
        for (int i = 0; i < prepared.length; i++) {
            try {
                prepared[i] = prepare(messages.get(i));
            } catch (RuntimeException e) {
                call.decide(i, PublishOutcome.failed(e));
            }
        }
        if (closed) {
            call.failUndecided(new RetryableFailureException("the RabbitMQ publisher is closed"));
            return call.outcomes();
        }
        String blocked = connector.blockedReason();
        if (blocked != null) {
            call.failUndecided(
                    new RetryableFailureException(
                            "the RabbitMQ connection is blocked by a resource alarm ("
                                    + blocked
                                    + "): nothing is published until the broker unblocks it"));
            return call.outcomes();
        }
        if (call.allDecided()) {
            return call.outcomes();
        }
        try {
            writers.execute(() -> write(call, prepared));
        } catch (RejectedExecutionException e) {
            call.failUndecided(
                    new RetryableFailureException("the RabbitMQ publisher is closed", e));
            return call.outcomes();
        }

        boolean allDecided;
        boolean interrupted = false;
        try {
            allDecided = call.await(deadline);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            interrupted = true;
            allDecided = false;
        }
        if (!allDecided) {
            call.failUndecided(
                    new RetryableFailureException(
                            interrupted
                                    ? "interrupted while " + call.stage()
                                    : "RabbitMQ at "
                                            + connector.address()
                                            + " did not confirm within "
                                            + (limit.toMillis() % 1000 == 0
                                                    ? limit.toSeconds() + "s"
                                                    : limit.toMillis() + "ms")
                                            + " (the publisher was "
                                            + call.stage()
                                            + ")"));
        }
        if (!call.abandon()) {
            // The writer is done: this thread decides what becomes of the channel.
            ConfirmChannel channel = call.channel();
            if (channel != null
                    && (!allDecided || call.channelBroken() || !connector.offer(channel))) {
                discard(channel);
            }
        }
        return call.outcomes();
    }

    /** Runs on a writer thread: borrows a channel and publishes every message not decided yet. */
    private void write(PublishCall call, Prepared[] prepared) {
        ConfirmChannel channel = null;
        boolean broken = false;
        try {
            if (!call.abandoned()) {
                call.stage("opening a channel");
                channel = connector.borrow();
                call.stage("checking exchanges");
                Set<String> missing = missingExchanges(call, prepared);
                call.stage("publishing");
                for (int i = 0; i < prepared.length && !call.abandoned(); i++) {
                    if (prepared[i] == null || call.isDecided(i)) {
                        continue;
                    }
                    if (missing.contains(prepared[i].destination().exchange())) {
                        call.decide(
                                i,
                                PublishOutcome.failed(
                                        new RetryableFailureException(
                                                "exchange '"
                                                        + prepared[i].destination().exchange()
                                                        + "' does not exist (RabbitMQ answered 404 "
                                                        + "NOT_FOUND to a passive declare), so message '"
                                                        + prepared[i].messageId()
                                                        + "' was not sent")));
                    } else {
                        channel.publish(call, i, prepared[i]);
                    }
                }
                call.stage("waiting for publisher confirms");
            }
        } catch (Exception e) {
            broken = true;
            call.failUndecided(
                    new RetryableFailureException(
                            "could not publish to RabbitMQ at "
                                    + connector.address()
                                    + " while "
                                    + call.stage()
                                    + ": "
                                    + e,
                            e));
        } finally {
            call.handOver(channel, broken);
            if (!call.markWritten() && channel != null) {
                // The caller gave up before the writes ended: nobody else will look at this channel
                // again.
                channel.forget(call);
                channel.closeQuietly();
            }
        }
    }

    /** Checks the exchanges that were found missing before (and only those) again. */
    private Set<String> missingExchanges(PublishCall call, Prepared[] prepared)
            throws IOException, TimeoutException {
        Set<String> checked = new HashSet<>();
        Set<String> missing = new HashSet<>();
        for (int i = 0; i < prepared.length; i++) {
            if (prepared[i] != null && !call.isDecided(i)) {
                String exchange = prepared[i].destination().exchange();
                if (checked.add(exchange) && !connector.exchangeExists(exchange)) {
                    missing.add(exchange);
                }
            }
        }
        return missing;
    }

    private void discard(ConfirmChannel channel) {
        try {
            writers.execute(channel::closeQuietly);
        } catch (RejectedExecutionException e) {
            // closing: the connection's close takes the channel with it
        }
    }

    private Prepared prepare(Message m) {
        Destination d = Publisher.applyMapper(destinationMapper, "destinationMapper", m);
        if (d == null) {
            throw new PermanentFailureException(
                    "destinationMapper returned null for message '"
                            + m.id()
                            + "' (topic '"
                            + m.topic()
                            + "')");
        }
        if (m.payloadSize() > maxBodyBytes) {
            throw new InvalidMessageException(
                    "message '"
                            + m.id()
                            + "' has a "
                            + m.payloadSize()
                            + "-byte payload, over the "
                            + maxBodyBytes
                            + "-byte maxBodyBytes limit (RabbitMQ's max_message_size)");
        }
        shortString(m.id(), "its id (message-id property)", m);
        shortString(m.topic(), "its topic (type property)", m);
        shortString(m.contentType(), "its content type", m);
        Map<String, Object> headers = new LinkedHashMap<>();
        for (Map.Entry<String, String> h : m.headers().entrySet()) {
            shortString(h.getKey(), "header name '" + h.getKey() + "'", m);
            headers.put(h.getKey(), h.getValue());
        }
        headers.putAll(OutboxHeaders.of(m));
        AMQP.BasicProperties properties =
                new AMQP.BasicProperties.Builder()
                        .deliveryMode(2)
                        .messageId(m.id())
                        .contentType(m.contentType())
                        .timestamp(Date.from(m.occurredAt()))
                        .type(m.topic())
                        .appId(appId)
                        .headers(headers)
                        .build();
        return new Prepared(m.id(), d, properties, m.payload());
    }

    private static void shortString(String value, String what, Message m) {
        int bytes = utf8Length(value);
        if (bytes > SHORT_STRING_MAX) {
            throw new InvalidMessageException(
                    "message '"
                            + m.id()
                            + "' cannot be published to RabbitMQ: "
                            + what
                            + " is "
                            + bytes
                            + " bytes in UTF-8, over AMQP's "
                            + SHORT_STRING_MAX
                            + "-byte short-string limit");
        }
    }

    static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 2;
        }
    }

    /**
     * Closes the connection; calls still waiting for confirms fail (retryable). Waits at most a few
     * seconds, even when the broker has blocked the connection. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        Thread closer =
                new Thread(
                        () -> connector.close((int) CLOSE_TIMEOUT.toMillis()),
                        "outbox4j-rabbitmq-close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(CLOSE_TIMEOUT.multipliedBy(2).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            writers.shutdown();
        }
    }

    /**
     * Where a message goes: an exchange and a routing key.
     *
     * @param exchange the exchange name; {@code ""} is the default exchange, which routes to the
     *     queue named by the routing key
     * @param routingKey the routing key
     */
    public record Destination(String exchange, String routingKey) {
        /**
         * Validates a destination.
         *
         * @param exchange the exchange name, at most 255 bytes in UTF-8; {@code ""} for the default
         *     exchange
         * @param routingKey the routing key, at most 255 bytes in UTF-8
         * @throws IllegalArgumentException if either is null or too long
         */
        public Destination {
            checkShortString(exchange, "exchange");
            checkShortString(routingKey, "routingKey");
        }

        String describe() {
            return "(exchange '" + exchange + "', routing key '" + routingKey + "')";
        }
    }

    private static void checkShortString(String value, String name) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        int bytes = utf8Length(value);
        if (bytes > SHORT_STRING_MAX) {
            throw new IllegalArgumentException(
                    name
                            + " must be at most "
                            + SHORT_STRING_MAX
                            + " bytes in UTF-8, but was "
                            + bytes
                            + " bytes: '"
                            + value
                            + "'");
        }
    }

    /** Configures a {@link RabbitMqPublisher}. */
    public static final class Builder {
        private @Nullable ConnectionFactory factory;
        private boolean factoryGiven;
        private boolean uriGiven;
        private @Nullable String exchange;
        private @Nullable Function<Message, Destination> mapper;
        private @Nullable Duration publishTimeout;
        private @Nullable String appId;
        private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
        private String connectionName = DEFAULT_CONNECTION_NAME;

        private Builder() {}

        /**
         * Connects with a copy of this factory (host, credentials, TLS, timeouts, heartbeat...).
         * The copy has automatic connection recovery turned off: the publisher re-opens a lost
         * connection itself. Exclusive with {@link #uri(String)}.
         *
         * @param factory the connection factory; later changes to it do not affect the publisher
         * @return this builder
         * @throws IllegalArgumentException if {@code factory} is null
         */
        public Builder connectionFactory(ConnectionFactory factory) {
            if (factory == null) {
                throw new IllegalArgumentException("connectionFactory must not be null");
            }
            this.factory = factory.clone();
            this.factoryGiven = true;
            return this;
        }

        /**
         * Connects to the broker named by an AMQP URI, e.g. {@code
         * amqp://user:pass@host:5672/vhost} or {@code amqps://...}; the rest of the factory keeps
         * the client's defaults. Exclusive with {@link #connectionFactory(ConnectionFactory)}.
         *
         * @param uri the URI
         * @return this builder
         * @throws IllegalArgumentException if the URI is null or not a valid AMQP URI (the message
         *     hides the password)
         */
        public Builder uri(String uri) {
            if (uri == null) {
                throw new IllegalArgumentException("uri must not be null");
            }
            ConnectionFactory f = new ConnectionFactory();
            try {
                f.setUri(uri);
            } catch (URISyntaxException | GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "uri must be an amqp:// or amqps:// URI, but was '"
                                + withoutPassword(uri)
                                + "' ("
                                + e.getMessage()
                                + ")",
                        e);
            }
            this.factory = f;
            this.uriGiven = true;
            return this;
        }

        private static String withoutPassword(String uri) {
            return uri.replaceFirst("(?<=://)[^@/]*@", "***@");
        }

        /**
         * Sets the exchange the default mapping publishes to, with the topic as routing key. The
         * default, {@code ""}, is RabbitMQ's default exchange: a message goes to the queue named
         * like its topic.
         *
         * @param exchange the exchange name, at most 255 bytes in UTF-8
         * @return this builder
         * @throws IllegalArgumentException if the name is null or too long
         */
        public Builder exchange(String exchange) {
            checkShortString(exchange, "exchange");
            this.exchange = exchange;
            return this;
        }

        /**
         * Chooses each message's exchange and routing key, instead of {@link #exchange(String)} +
         * topic.
         *
         * <p>The rule every outbox4j publisher follows for its mapping function: the destination is
         * a property of the message, so if the function throws for a message, or returns no
         * destination or one the broker can never accept (here: null, or a name the {@link
         * Destination} constructor refuses), that message fails permanently and goes to the dead
         * letter: it would fail the same way on every retry. The one exception is a {@link
         * RetryAfterException} thrown on purpose, which retries the message no earlier than its
         * delay. The other messages of the call are not affected. An exchange that does not exist
         * (yet) or routes nowhere is not a mapping failure: its messages are retried.
         *
         * @param destinationMapper message → destination
         * @return this builder
         * @throws IllegalArgumentException if the function is null
         */
        public Builder destinationMapper(Function<Message, Destination> destinationMapper) {
            if (destinationMapper == null) {
                throw new IllegalArgumentException("destinationMapper must not be null");
            }
            this.mapper = destinationMapper;
            return this;
        }

        /**
         * Caps how long one call waits for its confirms, when the caller allows longer. By default
         * only the caller's timeout applies.
         *
         * @param publishTimeout the cap, positive
         * @return this builder
         * @throws IllegalArgumentException if it is null or not positive
         */
        public Builder publishTimeout(Duration publishTimeout) {
            if (publishTimeout == null || publishTimeout.isNegative() || publishTimeout.isZero()) {
                throw new IllegalArgumentException(
                        "publishTimeout must be positive, but was " + publishTimeout);
            }
            this.publishTimeout = publishTimeout;
            return this;
        }

        /**
         * Sets the {@code app-id} property of every message. None by default.
         *
         * @param appId the application id, at most 255 bytes in UTF-8
         * @return this builder
         * @throws IllegalArgumentException if it is null or too long
         */
        public Builder appId(String appId) {
            checkShortString(appId, "appId");
            this.appId = appId;
            return this;
        }

        /**
         * Sets the largest payload sent; a larger one fails permanently without reaching the broker
         * (the broker would close the channel). Set it to the broker's {@code max_message_size}
         * when lowered.
         *
         * @param maxBodyBytes the limit in bytes, positive; {@value
         *     RabbitMqPublisher#DEFAULT_MAX_BODY_BYTES} by default
         * @return this builder
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder maxBodyBytes(int maxBodyBytes) {
            if (maxBodyBytes < 1) {
                throw new IllegalArgumentException(
                        "maxBodyBytes must be >= 1, but was " + maxBodyBytes);
            }
            this.maxBodyBytes = maxBodyBytes;
            return this;
        }

        /**
         * Sets the client-provided connection name the broker shows (management UI, {@code
         * rabbitmqctl}).
         *
         * @param connectionName the name, not blank; {@value
         *     RabbitMqPublisher#DEFAULT_CONNECTION_NAME} by default
         * @return this builder
         * @throws IllegalArgumentException if it is null or blank
         */
        public Builder connectionName(String connectionName) {
            if (connectionName == null || connectionName.isBlank()) {
                throw new IllegalArgumentException(
                        "connectionName must not be blank, but was '" + connectionName + "'");
            }
            this.connectionName = connectionName;
            return this;
        }

        /**
         * Builds the publisher. It connects on the first publish, not here.
         *
         * @return the publisher
         * @throws IllegalArgumentException if neither or both of a connection factory and a URI
         *     were given, or both an exchange and a destination mapper were (the mapper chooses the
         *     exchange)
         */
        public RabbitMqPublisher build() {
            if (factory == null) {
                throw new IllegalArgumentException(
                        "connectionFactory or uri must be set, but neither was");
            }
            if (factoryGiven && uriGiven) {
                throw new IllegalArgumentException(
                        "set either connectionFactory(...) or uri(...), not both: one would"
                                + " silently replace the other's host, credentials and settings");
            }
            if (exchange != null && mapper != null) {
                throw new IllegalArgumentException(
                        "set either exchange('"
                                + exchange
                                + "') or destinationMapper, not both: the mapper chooses the"
                                + " exchange");
            }
            return new RabbitMqPublisher(this);
        }
    }
}
