package io.outbox4j.publisher.sqs;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Publishes outbox messages to Amazon SQS (or any SQS-compatible server) with {@code
 * SendMessageBatch}.
 *
 * <pre>{@code
 * Publisher publisher = SqsPublisher.builder()
 *     .client(sqsClient)                       // or .asyncClient(sqsAsyncClient)
 *     .queueNameMapper(m -> m.topic().replace('.', '-'))   // default: the queue named like the topic
 *     .fifoDefaultGroupId("outbox")            // FIFO queues: group of messages without a key
 *     .build();
 * }</pre>
 *
 * <h2>Destination</h2>
 *
 * By default a message goes to the queue named like its topic; the URL is looked up once with
 * {@code GetQueueUrl} and cached. {@link Builder#queueNameMapper} maps a message to another queue
 * name; {@link Builder#queueMapper} maps it straight to a queue URL. A missing queue fails its
 * messages with a message naming the queue, as a <em>retryable</em> failure: creating the queue
 * lets them through, whereas a permanent failure would dead-letter them at once. A mapper that
 * throws, or gives no queue URL or no valid queue name, fails that message permanently (see {@link
 * Builder#queueNameMapper}).
 *
 * <h2>What is sent</h2>
 *
 * <ul>
 *   <li>Requests of at most 10 entries and at most {@code maxMessageBytes} in all; each entry's id
 *       is {@code <position>-<message id with characters SQS refuses replaced by '_'>}, cut to 80
 *       characters.
 *   <li>Body: the payload as text when it is valid UTF-8 made only of characters SQS accepts;
 *       otherwise its base64 form, marked by the attribute {@value
 *       OutboxHeaders#BODY_ENCODING}={@value #ENCODING_BASE64}. An empty payload (SQS refuses an
 *       empty body) is sent as the body {@value #EMPTY_BODY} marked {@value
 *       OutboxHeaders#BODY_ENCODING}={@value #ENCODING_EMPTY}.
 *   <li>String message attributes: {@value OutboxHeaders#ID}, {@value OutboxHeaders#TOPIC}, {@value
 *       OutboxHeaders#MODULE}, {@value OutboxHeaders#CONTENT_TYPE}, {@value
 *       OutboxHeaders#OCCURRED_AT} (ISO-8601), {@value OutboxHeaders#KEY} when the message has a
 *       key, and {@value OutboxHeaders#HEADERS} when it has user headers: all of them in one JSON
 *       object, in their order, because SQS allows only 10 attributes per message whereas a message
 *       may carry up to 64 headers. At most 8 attributes are used, so a message never fails on the
 *       attribute count.
 *   <li>FIFO queues (URL ending in {@code .fifo}): {@code MessageGroupId} = the message key, else
 *       {@link Builder#fifoDefaultGroupId}; {@code MessageDeduplicationId} = the message id. A
 *       value SQS would refuse (over 128 characters, or characters outside printable ASCII) is
 *       replaced by {@code sha256-<hex of its UTF-8 bytes>}, so equal values still give equal ids.
 * </ul>
 *
 * <h2>Outcomes</h2>
 *
 * <ul>
 *   <li>Published: the entry is in {@code Successful[]}.
 *   <li>Permanent ({@link io.outbox4j.api.PermanentFailureException}; an {@link
 *       io.outbox4j.api.InvalidMessageException} where the message itself is at fault): the message
 *       is larger than {@code maxMessageBytes} (body plus attributes, checked before sending; the
 *       other messages are still sent), an attribute would hold a character SQS refuses, SQS lists
 *       it in {@code Failed[]} with {@code SenderFault=true}, SQS rejects its content when it is
 *       sent alone, or its mapping failed.
 *   <li>Retryable ({@link io.outbox4j.api.RetryableFailureException}, with the SDK's exception as
 *       the cause): everything else — {@code Failed[]} with {@code SenderFault=false}, a request
 *       that failed as a whole (every entry of that request fails), a missing queue, access denied,
 *       throttling, a timeout. When a whole request is rejected for the content of its entries
 *       (ElasticMQ does this for one oversized entry), the entries are sent again one by one so
 *       that only the culprit fails.
 *   <li>FIFO order: the requests of a FIFO queue are sent one after the other, and after a
 *       retryable failure the later messages of the same group in the same call are not sent (they
 *       fail as retryable), so a group is never reordered across requests.
 * </ul>
 *
 * <h2>Timeouts</h2>
 *
 * Every request carries an API-call timeout and an API-call-attempt timeout ({@link
 * Builder#apiCallTimeout}, {@link Builder#apiCallAttemptTimeout}), each cut to the time left of the
 * {@code publish} call's own timeout; a message without an answer by then fails as retryable (it
 * may still have arrived: delivery is at least once, and the message id is the consumer's
 * deduplication key). Once the call has timed out or its thread was interrupted, no further request
 * is sent.
 *
 * <p>The publisher is thread-safe. It does not own the SQS client: {@link #close()} stops the
 * publisher and leaves the client open.
 */
public final class SqsPublisher implements Publisher {
    /** {@value OutboxHeaders#BODY_ENCODING} value: the body is the payload in standard base64. */
    public static final String ENCODING_BASE64 = "base64";

    /**
     * {@value OutboxHeaders#BODY_ENCODING} value: the payload is empty and the body a placeholder.
     */
    public static final String ENCODING_EMPTY = "empty";

    /** The placeholder body of a message with an empty payload (SQS refuses an empty body). */
    public static final String EMPTY_BODY = "(empty)";

    /** The default message size limit: 256 KiB, the limit every SQS-compatible server takes. */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024;

    /**
     * The largest accepted {@code maxMessageBytes}: 1 MiB, the largest message Amazon SQS takes.
     */
    public static final int MAX_MESSAGE_BYTES = 1024 * 1024;

    /** The smallest accepted {@code maxMessageBytes}: 1 KiB, SQS's own minimum for a queue. */
    public static final int MIN_MESSAGE_BYTES = 1024;

    /** The default timeout of one SQS API call, retries included. */
    public static final Duration DEFAULT_API_CALL_TIMEOUT = Duration.ofSeconds(10);

    /** The default timeout of one HTTP attempt of an SQS API call. */
    public static final Duration DEFAULT_API_CALL_ATTEMPT_TIMEOUT = Duration.ofSeconds(5);

    private final SqsCalls calls;
    private final @Nullable Function<Message, String> queueMapper;
    private final QueueResolver resolver;
    private final EntryEncoder encoder;
    private final int maxMessageBytes;
    private final Duration apiCallTimeout;
    private final Duration apiCallAttemptTimeout;
    private final String description;
    private volatile boolean closed;

    private SqsPublisher(Builder b) {
        this.calls =
                b.client != null
                        ? SqsCalls.of(b.client)
                        : SqsCalls.of(Objects.requireNonNull(b.asyncClient, "checked by build()"));
        this.queueMapper = b.queueMapper;
        this.resolver = new QueueResolver(calls, b.queueNameMapper);
        this.encoder = new EntryEncoder(b.maxMessageBytes, b.fifoDefaultGroupId);
        this.maxMessageBytes = b.maxMessageBytes;
        this.apiCallTimeout = b.apiCallTimeout;
        this.apiCallAttemptTimeout = b.apiCallAttemptTimeout;
        this.description =
                "SqsPublisher["
                        + (b.client != null ? "sync" : "async")
                        + " client, maxMessageBytes="
                        + maxMessageBytes
                        + ", apiCallTimeout="
                        + apiCallTimeout
                        + ", apiCallAttemptTimeout="
                        + apiCallAttemptTimeout
                        + (b.fifoDefaultGroupId == null
                                ? ""
                                : ", fifoDefaultGroupId=" + b.fifoDefaultGroupId)
                        + "]";
    }

    /**
     * Starts configuring a publisher.
     *
     * @return a new builder; {@link Builder#client} or {@link Builder#asyncClient} is required
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Publishes a batch with as few {@code SendMessageBatch} requests as the limits allow.
     *
     * @param messages the messages; an empty list returns an empty list
     * @param timeout how long the call may take in all, positive
     * @return one outcome per message, in the order of {@code messages}
     * @throws IllegalArgumentException if {@code messages}, one of them, or {@code timeout} is
     *     null, or the timeout is not positive ({@link Publisher#checkArguments})
     */
    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        Publisher.checkArguments(messages, timeout);
        if (messages.isEmpty()) {
            return List.of();
        }
        if (closed) {
            RetryableFailureException cause =
                    new RetryableFailureException(
                            "the SqsPublisher is closed; the message will be retried");
            return messages.stream().map(m -> PublishOutcome.failed(cause)).toList();
        }
        Deadline deadline = new Deadline(timeout, apiCallTimeout, apiCallAttemptTimeout);
        Function<Message, String> mapper = queueMapper;
        Function<Message, String> urlOf =
                mapper != null ? m -> mappedUrl(mapper, m) : resolver.forCall(deadline);
        return new PublishCall(
                        calls,
                        encoder,
                        resolver,
                        maxMessageBytes,
                        deadline,
                        () -> closed,
                        messages.size())
                .run(messages, urlOf);
    }

    private static String mappedUrl(Function<Message, String> queueMapper, Message m) {
        String url = Publisher.applyMapper(queueMapper, "queueMapper", m);
        if (url == null || url.isBlank()) {
            throw new PermanentFailureException(
                    "queueMapper returned "
                            + (url == null ? "null" : "a blank URL")
                            + " for message '"
                            + m.id()
                            + "' (topic '"
                            + m.topic()
                            + "')");
        }
        return url;
    }

    /**
     * Stops publishing: a later {@link #publish} call fails every message as retryable without
     * sending, and a call in flight sends no further request (its unsent messages fail as
     * retryable). Forgets the cached queue URLs. The SQS client belongs to the caller, who closes
     * it. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        resolver.clear();
    }

    @Override
    public String toString() {
        return closed
                ? description.substring(0, description.length() - 1) + ", closed]"
                : description;
    }

    /** Configures an {@link SqsPublisher}; each setter checks its value at once. */
    public static final class Builder {
        private @Nullable SqsClient client;
        private @Nullable SqsAsyncClient asyncClient;
        private @Nullable Function<Message, String> queueMapper;
        private Function<Message, String> queueNameMapper = Message::topic;
        private boolean queueNameMapperSet;
        private @Nullable String fifoDefaultGroupId;
        private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
        private Duration apiCallTimeout = DEFAULT_API_CALL_TIMEOUT;
        private Duration apiCallAttemptTimeout = DEFAULT_API_CALL_ATTEMPT_TIMEOUT;

        private Builder() {}

        /**
         * Sends with a synchronous client: the requests of one call go one after the other in the
         * calling thread.
         *
         * @param client the client, configured with region and credentials; the caller keeps
         *     ownership
         * @return this builder
         * @throws IllegalArgumentException if the client is null
         */
        public Builder client(SqsClient client) {
            this.client = notNull(client, "client");
            return this;
        }

        /**
         * Sends with an asynchronous client: the requests of one call to a standard queue go out
         * together.
         *
         * @param asyncClient the client, configured with region and credentials; the caller keeps
         *     ownership
         * @return this builder
         * @throws IllegalArgumentException if the client is null
         */
        public Builder asyncClient(SqsAsyncClient asyncClient) {
            this.asyncClient = notNull(asyncClient, "asyncClient");
            return this;
        }

        /**
         * Maps each message straight to a queue URL (no lookup). Exclusive with {@link
         * #queueNameMapper}. If it throws or returns no URL for a message, that message fails
         * permanently: see {@link #queueNameMapper} for the rule. A URL of a queue that does not
         * exist fails its messages retryably.
         *
         * @param queueMapper message to queue URL, e.g. {@code m ->
         *     "https://sqs.eu-west-1.amazonaws.com/123/" + m.topic()}
         * @return this builder
         * @throws IllegalArgumentException if the mapper is null
         */
        public Builder queueMapper(Function<Message, String> queueMapper) {
            this.queueMapper = notNull(queueMapper, "queueMapper");
            return this;
        }

        /**
         * Maps each message to a queue name, resolved to its URL with {@code GetQueueUrl} once and
         * cached. The default is {@code Message::topic}. Exclusive with {@link #queueMapper}.
         *
         * <p>The rule every outbox4j publisher follows for its mapping function: the destination is
         * a property of the message, so if the function throws for a message, or returns no
         * destination or one SQS can never accept (here: null, or not a valid queue name, as a
         * topic with dots is), that message fails permanently and goes to the dead letter: it would
         * fail the same way on every retry (fix the mapping, then replay the dead letters). The one
         * exception is a {@link io.outbox4j.api.RetryAfterException} thrown on purpose, which
         * retries the message no earlier than its delay. The other messages of the call are not
         * affected. A valid name of a queue that does not exist (yet) is not a mapping failure: its
         * messages are retried until the queue is created.
         *
         * @param queueNameMapper message to queue name (1-80 characters of {@code [A-Za-z0-9_-]},
         *     FIFO names ending in {@code .fifo})
         * @return this builder
         * @throws IllegalArgumentException if the mapper is null
         */
        public Builder queueNameMapper(Function<Message, String> queueNameMapper) {
            this.queueNameMapper = notNull(queueNameMapper, "queueNameMapper");
            this.queueNameMapperSet = true;
            return this;
        }

        /**
         * Sets the {@code MessageGroupId} of messages without a key sent to a FIFO queue. Without
         * it, such a message fails (retryable, with a message saying to set this) because SQS
         * requires a group.
         *
         * @param groupId 1 to 128 printable ASCII characters ({@code !} to {@code ~})
         * @return this builder
         * @throws IllegalArgumentException if the group id is not one SQS accepts
         */
        public Builder fifoDefaultGroupId(String groupId) {
            notNull(groupId, "fifoDefaultGroupId");
            if (groupId.isEmpty()
                    || groupId.length() > EntryEncoder.MAX_FIFO_ID_LENGTH
                    || !groupId.chars().allMatch(c -> c >= 0x21 && c <= 0x7E)) {
                throw new IllegalArgumentException(
                        "fifoDefaultGroupId must be 1 to 128 printable ASCII characters"
                                + " (! to ~), but was '"
                                + groupId
                                + "'");
            }
            this.fifoDefaultGroupId = groupId;
            return this;
        }

        /**
         * Sets the largest message accepted, counted as SQS does (body plus attribute names, types
         * and values), and the largest total of one request. Set it to the queue's {@code
         * MaximumMessageSize}.
         *
         * @param maxMessageBytes from {@value SqsPublisher#MIN_MESSAGE_BYTES} to {@value
         *     SqsPublisher#MAX_MESSAGE_BYTES}; default {@value
         *     SqsPublisher#DEFAULT_MAX_MESSAGE_BYTES}
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder maxMessageBytes(int maxMessageBytes) {
            if (maxMessageBytes < MIN_MESSAGE_BYTES || maxMessageBytes > MAX_MESSAGE_BYTES) {
                throw new IllegalArgumentException(
                        "maxMessageBytes must be between "
                                + MIN_MESSAGE_BYTES
                                + " and "
                                + MAX_MESSAGE_BYTES
                                + ", but was "
                                + maxMessageBytes);
            }
            this.maxMessageBytes = maxMessageBytes;
            return this;
        }

        /**
         * Sets the timeout of one SQS API call, SDK retries included (cut to the time left of each
         * publish call).
         *
         * @param timeout positive; default 10 seconds
         * @return this builder
         * @throws IllegalArgumentException if null or not positive
         */
        public Builder apiCallTimeout(Duration timeout) {
            this.apiCallTimeout = positive(timeout, "apiCallTimeout");
            return this;
        }

        /**
         * Sets the timeout of one HTTP attempt of an SQS API call.
         *
         * @param timeout positive, at most the API-call timeout; default 5 seconds
         * @return this builder
         * @throws IllegalArgumentException if null or not positive
         */
        public Builder apiCallAttemptTimeout(Duration timeout) {
            this.apiCallAttemptTimeout = positive(timeout, "apiCallAttemptTimeout");
            return this;
        }

        /**
         * Builds the publisher.
         *
         * @return the publisher
         * @throws IllegalArgumentException if no client or both clients were set, if both mappers
         *     were set, or if the attempt timeout exceeds the API-call timeout
         */
        public SqsPublisher build() {
            if ((client == null) == (asyncClient == null)) {
                throw new IllegalArgumentException(
                        client == null
                                ? "client or asyncClient must be set, but neither was: an SQS client is required"
                                : "set either client(SqsClient) or asyncClient(SqsAsyncClient), not both");
            }
            if (queueMapper != null && queueNameMapperSet) {
                throw new IllegalArgumentException(
                        "set either queueMapper (to a URL) or queueNameMapper (to a name),"
                                + " not both");
            }
            if (apiCallAttemptTimeout.compareTo(apiCallTimeout) > 0) {
                throw new IllegalArgumentException(
                        "apiCallAttemptTimeout ("
                                + apiCallAttemptTimeout
                                + ") must not exceed apiCallTimeout ("
                                + apiCallTimeout
                                + ")");
            }
            return new SqsPublisher(this);
        }

        private static <T> T notNull(T value, String field) {
            if (value == null) {
                throw new IllegalArgumentException(field + " must not be null");
            }
            return value;
        }

        private static Duration positive(Duration value, String field) {
            if (Objects.requireNonNullElse(value, Duration.ZERO).isZero() || value.isNegative()) {
                throw new IllegalArgumentException(field + " must be positive, but was " + value);
            }
            return value;
        }
    }
}
