package io.outbox4j.publisher.sqs;

import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.testservices.SqsServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.client.builder.AwsClientBuilder;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;

/**
 * Clients for the shared SQS server, queue creation, and a consumer that reads back and decodes
 * what the publisher sent, following only the format documented on {@link SqsPublisher}.
 */
final class SqsTestSupport {
    /**
     * Every SendMessageBatch request the shared clients sent, as the list of its entry counts per
     * queue.
     */
    static final List<SentRequest> SENT = new CopyOnWriteArrayList<>();

    private static SqsClient client;
    private static SqsAsyncClient asyncClient;

    private SqsTestSupport() {}

    record SentRequest(String queueUrl, int entries) {}

    /** Records the SendMessageBatch requests that leave the client; it changes nothing. */
    static final class RequestRecorder implements ExecutionInterceptor {
        @Override
        public void beforeTransmission(
                Context.BeforeTransmission context, ExecutionAttributes attributes) {
            SdkRequest request = context.request();
            if (request instanceof SendMessageBatchRequest r) {

                SENT.add(new SentRequest(r.queueUrl(), r.entries().size()));
            }
        }
    }

    static synchronized SqsClient client() {
        if (client == null) {
            client = newClient(new RequestRecorder());
            Runtime.getRuntime().addShutdownHook(new Thread(client::close));
            client.listQueues(); // warm up (class loading, connection) outside the publishers'
            // timeouts
        }
        return client;
    }

    static synchronized SqsAsyncClient asyncClient() {
        if (asyncClient == null) {
            asyncClient = configure(SqsAsyncClient.builder(), new RequestRecorder()).build();
            Runtime.getRuntime().addShutdownHook(new Thread(asyncClient::close));
            asyncClient.listQueues().join(); // warm up outside the publishers' timeouts
        }
        return asyncClient;
    }

    /** A new synchronous client of the shared server (the caller closes it). */
    static SqsClient newClient(ExecutionInterceptor... interceptors) {
        return configure(SqsClient.builder(), interceptors).build();
    }

    private static <B extends AwsClientBuilder<B, ?>> B configure(
            B builder, ExecutionInterceptor... interceptors) {
        SqsServer server = SqsServer.shared();
        return builder.endpointOverride(server.endpoint())
                .region(Region.of(server.region()))
                .credentialsProvider(
                        StaticCredentialsProvider.create(
                                AwsBasicCredentials.create(
                                        server.accessKeyId(), server.secretAccessKey())))
                .overrideConfiguration(
                        c -> List.of(interceptors).forEach(c::addExecutionInterceptor));
    }

    /** The requests sent to one queue, in order. */
    static List<Integer> requestsTo(String queueUrl) {
        List<Integer> sizes = new ArrayList<>();
        SENT.stream()
                .filter(r -> r.queueUrl().equals(queueUrl))
                .forEach(r -> sizes.add(r.entries()));
        return sizes;
    }

    /** A fresh queue name (plus {@code .fifo} when asked); valid as a topic too. */
    static String uniqueName(String prefix, boolean fifo) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8) + (fifo ? ".fifo" : "");
    }

    static String createQueue(String name) {
        Map<QueueAttributeName, String> attributes = new LinkedHashMap<>();
        if (name.endsWith(".fifo")) {
            attributes.put(QueueAttributeName.FIFO_QUEUE, "true");
        }
        return client().createQueue(b -> b.queueName(name).attributes(attributes)).queueUrl();
    }

    static String queueUrl(String name) {
        return client().getQueueUrl(b -> b.queueName(name)).queueUrl();
    }

    /**
     * Receives (and deletes) messages until {@code expected} arrived or the timeout passed, in the
     * order the queue delivered them.
     */
    static List<Message> receive(String queueUrl, int expected, Duration timeout) {
        List<Message> received = new ArrayList<>();
        long end = System.nanoTime() + timeout.toNanos();
        while (received.size() < expected && System.nanoTime() < end) {
            received.addAll(receiveAndDelete(queueUrl));
        }
        return received;
    }

    /**
     * Receives (and deletes) with several consumers until {@code expected} distinct message ids
     * arrived or the timeout passed; duplicate deliveries are kept. Use one consumer where the
     * delivery order matters (FIFO).
     */
    static List<Message> receiveDistinct(
            String queueUrl, int expected, Duration timeout, int consumers)
            throws InterruptedException {
        List<Message> received = new ArrayList<>();
        Set<String> ids = ConcurrentHashMap.newKeySet();
        long end = System.nanoTime() + timeout.toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
            Thread t =
                    new Thread(
                            () -> {
                                while (ids.size() < expected && System.nanoTime() < end) {
                                    List<Message> batch = receiveAndDelete(queueUrl);
                                    synchronized (received) {
                                        received.addAll(batch);
                                    }
                                    batch.forEach(m -> ids.add(id(m)));
                                }
                            },
                            "sqs-test-consumer-" + c);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        return received;
    }

    /**
     * One ReceiveMessage (up to 10, waiting up to 1 s) with every attribute, then deletes what it
     * got.
     */
    private static List<Message> receiveAndDelete(String queueUrl) {
        List<Message> batch =
                client().receiveMessage(
                                b ->
                                        b.queueUrl(queueUrl)
                                                .maxNumberOfMessages(10)
                                                .waitTimeSeconds(1)
                                                .messageAttributeNames("All")
                                                .messageSystemAttributeNames(
                                                        MessageSystemAttributeName.MESSAGE_GROUP_ID,
                                                        MessageSystemAttributeName
                                                                .MESSAGE_DEDUPLICATION_ID))
                        .messages();
        if (!batch.isEmpty()) {
            List<DeleteMessageBatchRequestEntry> deletes = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                deletes.add(
                        DeleteMessageBatchRequestEntry.builder()
                                .id("d" + i)
                                .receiptHandle(batch.get(i).receiptHandle())
                                .build());
            }
            client().deleteMessageBatch(b -> b.queueUrl(queueUrl).entries(deletes));
        }
        return batch;
    }

    static String attribute(Message m, String name) {
        MessageAttributeValue v = m.messageAttributes().get(name);
        return v == null ? null : v.stringValue();
    }

    static String groupId(Message m) {
        return m.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID);
    }

    static String id(Message m) {
        return attribute(m, OutboxHeaders.ID);
    }

    static Optional<String> key(Message m) {
        return Optional.ofNullable(attribute(m, OutboxHeaders.KEY));
    }

    /** The payload, decoded as the publisher's javadoc says. */
    static byte[] payload(Message m) {
        String encoding = attribute(m, OutboxHeaders.BODY_ENCODING);
        if (encoding == null) {
            return m.body().getBytes(StandardCharsets.UTF_8);
        }
        return switch (encoding) {
            case SqsPublisher.ENCODING_BASE64 -> Base64.getDecoder().decode(m.body());
            case SqsPublisher.ENCODING_EMPTY -> new byte[0];
            default -> throw new AssertionError("unknown body encoding " + encoding);
        };
    }

    /** The user headers, parsed from the JSON object of {@link OutboxHeaders#HEADERS}. */
    static Map<String, String> headers(Message m) {
        String json = attribute(m, OutboxHeaders.HEADERS);
        return json == null ? Map.of() : new FlatJson(json).object();
    }

    /**
     * A minimal parser of a flat JSON object of string values (what the headers attribute holds).
     */
    static final class FlatJson {
        private final String s;
        private int i;

        FlatJson(String s) {
            this.s = s;
        }

        Map<String, String> object() {
            Map<String, String> out = new LinkedHashMap<>();
            expect('{');
            if (s.charAt(i) == '}') {
                i++;
                return out;
            }
            do {
                String k = string();
                expect(':');
                out.put(k, string());
            } while (s.charAt(i++) == ',');
            if (s.charAt(i - 1) != '}' || i != s.length()) {
                throw new AssertionError("not a flat JSON object: " + s);
            }
            return out;
        }

        private void expect(char c) {
            if (s.charAt(i++) != c) {
                throw new AssertionError("expected '" + c + "' at " + (i - 1) + " in " + s);
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            for (char c = s.charAt(i++); c != '"'; c = s.charAt(i++)) {
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    default -> b.append(e);
                }
            }
            return b.toString();
        }
    }
}
