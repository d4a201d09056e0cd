package io.outbox4j.publisher.kafka;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.InterruptException;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Publisher} that sends each message as one Kafka record and reports it published only
 * once the broker acknowledged it under {@code acks=all} with the idempotent producer.
 *
 * <pre>{@code
 * KafkaPublisher publisher = KafkaPublisher.builder()
 *         .bootstrapServers("localhost:9092")
 *         .producerProperty("compression.type", "lz4")   // any producer setting that keeps durability
 *         .build();
 * }</pre>
 *
 * <h2>The record</h2>
 *
 * <ul>
 *   <li>topic: the {@linkplain Builder#topicMapper(Function) topic mapper}'s result, by default the
 *       message topic;
 *   <li>key: the message key, else the message id (UTF-8), so one key always lands on one
 *       partition;
 *   <li>value: the payload bytes; timestamp: set by the producer when sent (the event time is a
 *       header, so an old message is not expired by time-based retention the moment it is
 *       published);
 *   <li>headers, UTF-8 values: the standard set of {@link OutboxHeaders#of(Message)} ({@value
 *       OutboxHeaders#ID}, {@value OutboxHeaders#TOPIC}, {@value OutboxHeaders#MODULE}, {@value
 *       OutboxHeaders#CONTENT_TYPE}, {@value OutboxHeaders#OCCURRED_AT} (ISO-8601, e.g. {@code
 *       2024-05-01T12:00:00.123456Z}), {@value OutboxHeaders#KEY} when the message has a key), then
 *       the user headers in their order. User headers cannot collide with these: {@link Message}
 *       forbids the {@code outbox-} prefix.
 * </ul>
 *
 * <h2>Sending and outcomes</h2>
 *
 * A batch is pipelined: every record is handed to the producer, the producer is flushed (so the
 * batch does not wait for {@code linger.ms}), then each acknowledgement is awaited, all within the
 * call's timeout. Each message gets its own outcome:
 *
 * <ul>
 *   <li>published — the broker acknowledged the record;
 *   <li>permanent failure ({@link io.outbox4j.api.PermanentFailureException}, the message is
 *       dead-lettered) — record too large, invalid topic name, a record the broker refuses as
 *       invalid, authorization refused, serialization error, or a topic mapper that throws or
 *       returns no valid topic (see {@link Builder#topicMapper(Function)});
 *   <li>retryable failure ({@link io.outbox4j.api.RetryableFailureException}) — everything else:
 *       broker unreachable, not enough in-sync replicas, no acknowledgement within the timeout, the
 *       publisher closed.
 * </ul>
 *
 * A Kafka exception is never reported bare: it is the cause of the outbox exception that names the
 * message and its topic.
 *
 * <p>The call runs on the caller's thread, with no hand-off to another one, and returns within its
 * timeout even when the producer blocks (no metadata, full buffer): one timer thread per publisher
 * interrupts a call still inside the producer at its deadline (the interrupt status it set is
 * cleared before the call returns), and whatever is not acknowledged by then is reported failed.
 * Such a record may still reach the broker later; it is then delivered twice, which at-least-once
 * delivery allows (consumers deduplicate on {@value OutboxHeaders#ID}). An interrupt from the
 * caller (the relay cancelling a late call) ends the call at once, its interrupt status kept.
 *
 * <p>Instances are thread-safe: several relay workers may call {@link #publish} at once; they share
 * one producer.
 */
public final class KafkaPublisher implements Publisher {
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final Producer<byte[], byte[]> producer;
    private final boolean ownsProducer;
    private final Function<Message, String> topicMapper;
    private final Duration closeTimeout;
    private final DeadlineInterrupt deadlines;

    /** Says why no broker answers when records time out; null for a producer given to us. */
    private final @Nullable BrokerProbe probe;

    private volatile boolean closed;

    private KafkaPublisher(
            Producer<byte[], byte[]> producer,
            boolean ownsProducer,
            Function<Message, String> topicMapper,
            Duration closeTimeout,
            @Nullable BrokerProbe probe) {
        this.producer = producer;
        this.probe = probe;
        this.ownsProducer = ownsProducer;
        this.topicMapper = topicMapper;
        this.closeTimeout = closeTimeout;
        this.deadlines =
                new DeadlineInterrupt(
                        "outbox4j-kafka-" + INSTANCES.incrementAndGet() + "-deadline-");
    }

    /**
     * Starts configuring a publisher.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Publishes a batch; see the class description for the record layout and the outcomes.
     *
     * @param messages the messages, not empty
     * @param timeout how long the call may take in all, positive
     * @return one outcome per message, in the order of {@code messages}
     * @throws IllegalArgumentException if {@code messages} is null or holds null, or {@code
     *     timeout} is not positive
     */
    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        Publisher.checkArguments(messages, timeout);
        if (messages.isEmpty()) {
            return List.of();
        }
        long deadline = System.nanoTime() + saturatedNanos(timeout);
        PublishCall batch = new PublishCall(messages, topicMapper, timeout);
        if (closed) {
            return batch.failAll(new RetryableFailureException("the KafkaPublisher is closed"));
        }
        DeadlineInterrupt.Armed interrupt;
        try {
            interrupt = deadlines.arm(deadline);
        } catch (RejectedExecutionException e) {
            return batch.failAll(new RetryableFailureException("the KafkaPublisher is closed", e));
        }
        try {
            batch.send(producer, () -> closed, deadline);
        } finally {
            interrupt.disarm();
        }
        return Failures.diagnose(batch.await(deadline), probe);
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    /**
     * Stops accepting batches and waits up to the close timeout for records already handed to the
     * producer to be acknowledged; those still unacknowledged are reported failed to the calls that
     * sent them, never published. A producer given to {@link Builder#producer(Producer)} is flushed
     * (within the same timeout) but not closed: its owner closes it.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        deadlines.shutdown();
        if (ownsProducer) {
            try {
                producer.close(closeTimeout);
            } catch (InterruptException e) {
                // Kafka has set the interrupt flag again; the producer is closed all the same
            }
        } else if (!closeTimeout.isZero()) {
            Thread flusher = new Thread(producer::flush, "outbox4j-kafka-close-flush");
            flusher.setDaemon(true);
            flusher.start();
            try {
                flusher.join(Math.max(1, closeTimeout.toMillis()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "KafkaPublisher["
                + (ownsProducer ? "own producer" : "caller's producer")
                + (closed ? ", closed" : "")
                + "]";
    }

    /**
     * Configures a {@link KafkaPublisher}. Give either {@link #bootstrapServers(String)} (plus any
     * producer properties), and the publisher creates, configures and closes its own producer; or
     * an existing {@link #producer(Producer)}, whose configuration and lifecycle stay with the
     * caller.
     *
     * <p>An own producer is configured for durability explicitly: {@code acks=all}, {@code
     * enable.idempotence=true}, {@code delivery.timeout.ms} from {@link
     * #deliveryTimeout(Duration)}, {@code max.block.ms} no longer than that. A property that would
     * weaken acks or idempotence is refused in {@link #build()} unless {@link
     * #allowWeakerDurability()} was called. Serializers and {@code transactional.id} are the
     * publisher's own and cannot be set.
     */
    public static final class Builder {
        private @Nullable String bootstrapServers;
        private final Map<String, Object> properties = new LinkedHashMap<>();
        private @Nullable Producer<byte[], byte[]> producer;
        private Function<Message, String> topicMapper = Message::topic;
        private Duration closeTimeout = Duration.ofSeconds(10);
        private boolean allowWeakerDurability;

        private Builder() {}

        /**
         * Sets the brokers the publisher's own producer connects to.
         *
         * @param bootstrapServers {@code host:port[,host:port...]}
         * @return this builder
         * @throws IllegalArgumentException if blank
         */
        public Builder bootstrapServers(String bootstrapServers) {
            if (bootstrapServers == null || bootstrapServers.isBlank()) {
                throw new IllegalArgumentException(
                        "bootstrapServers must not be blank, but was "
                                + (bootstrapServers == null
                                        ? "null"
                                        : "'" + bootstrapServers + "'"));
            }
            this.bootstrapServers = bootstrapServers.strip();
            return this;
        }

        /**
         * Adds one Kafka producer setting (see the Kafka producer configuration reference), e.g.
         * security or compression settings; a later value for the same name replaces the earlier
         * (this includes {@code delivery.timeout.ms}, which {@link #deliveryTimeout(Duration)} sets
         * too).
         *
         * @param name the producer config name, e.g. {@code compression.type}
         * @param value its value, as a string or the config's type
         * @return this builder
         * @throws IllegalArgumentException if the name is blank or the value null
         */
        public Builder producerProperty(String name, Object value) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("producer property name must not be blank");
            }
            if (value == null) {
                throw new IllegalArgumentException(
                        "producer property '" + name + "' must not have a null value");
            }
            properties.put(name.strip(), value);
            return this;
        }

        /**
         * Adds Kafka producer settings; see {@link #producerProperty(String, Object)}.
         *
         * @param properties the settings
         * @return this builder
         * @throws IllegalArgumentException if null, or a name is blank or a value null
         */
        public Builder producerProperties(Map<String, ?> properties) {
            if (properties == null) {
                throw new IllegalArgumentException("producerProperties must not be null");
            }
            properties.forEach(this::producerProperty);
            return this;
        }

        /**
         * Uses an existing producer instead of creating one. Its configuration is the caller's
         * (nothing is checked: configure {@code acks=all} and idempotence yourself), and so is its
         * lifecycle: {@link KafkaPublisher#close()} flushes it but does not close it.
         *
         * @param producer a producer of byte-array keys and values, not transactional
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder producer(Producer<byte[], byte[]> producer) {
            if (producer == null) {
                throw new IllegalArgumentException("producer must not be null");
            }
            this.producer = producer;
            return this;
        }

        /**
         * Chooses the Kafka topic of each message; by default the message topic.
         *
         * <p>The rule every outbox4j publisher follows for its mapping function: the destination is
         * a property of the message, so if the function throws for a message, or returns no
         * destination or one the broker can never accept (here: null, or not a legal Kafka topic
         * name), that message fails permanently and goes to the dead letter: it would fail the same
         * way on every retry. The one exception is a {@link io.outbox4j.api.RetryAfterException}
         * thrown on purpose, which retries the message no earlier than its delay. The other
         * messages of the call are not affected. A valid topic that does not exist yet is not a
         * mapping failure: its messages are retried.
         *
         * @param topicMapper returns a legal Kafka topic name for a message
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder topicMapper(Function<Message, String> topicMapper) {
            if (topicMapper == null) {
                throw new IllegalArgumentException("topicMapper must not be null");
            }
            this.topicMapper = topicMapper;
            return this;
        }

        /**
         * Bounds how long the own producer keeps trying to deliver a record ({@code
         * delivery.timeout.ms}) and how long a send may block ({@code max.block.ms}, unless set
         * explicitly). Default 30 s. Keep it no longer than the timeout the relay gives each batch,
         * so a record reported failed is rarely delivered late.
         *
         * @param deliveryTimeout positive, at most {@link Integer#MAX_VALUE} milliseconds
         * @return this builder
         * @throws IllegalArgumentException if not positive or too long
         */
        public Builder deliveryTimeout(Duration deliveryTimeout) {
            properties.put(
                    ProducerSettings.DELIVERY_TIMEOUT,
                    ProducerSettings.millis(deliveryTimeout, "deliveryTimeout"));
            return this;
        }

        /**
         * Bounds how long {@link KafkaPublisher#close()} waits for records in flight. Default 10 s.
         *
         * @param closeTimeout zero or positive
         * @return this builder
         * @throws IllegalArgumentException if null or negative
         */
        public Builder closeTimeout(Duration closeTimeout) {
            if (closeTimeout == null || closeTimeout.isNegative()) {
                throw new IllegalArgumentException(
                        "closeTimeout must be zero or positive, but was " + closeTimeout);
            }
            this.closeTimeout = closeTimeout;
            return this;
        }

        /**
         * Accepts producer properties that weaken durability ({@code acks} other than {@code all},
         * {@code enable.idempotence=false}). A message is then reported published when the broker
         * says so under those weaker settings, and may be lost if the leader fails. Off by default.
         *
         * @return this builder
         */
        public Builder allowWeakerDurability() {
            this.allowWeakerDurability = true;
            return this;
        }

        /**
         * Validates the settings and creates the publisher (and its producer, unless one was
         * given).
         *
         * @return the publisher
         * @throws IllegalArgumentException naming the setting that is missing, conflicting or
         *     weakens durability
         */
        public KafkaPublisher build() {
            if (producer != null) {
                if (bootstrapServers != null || !properties.isEmpty()) {
                    throw new IllegalArgumentException(
                            "give either producer(...) or bootstrapServers/producer"
                                    + " properties, not both: a given producer's configuration is its owner's");
                }
                return new KafkaPublisher(producer, false, topicMapper, closeTimeout, null);
            }
            Map<String, Object> config =
                    ProducerSettings.resolve(bootstrapServers, properties, allowWeakerDurability);
            return new KafkaPublisher(
                    ProducerSettings.create(config),
                    true,
                    topicMapper,
                    closeTimeout,
                    BrokerProbe.of(config.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)));
        }
    }
}
