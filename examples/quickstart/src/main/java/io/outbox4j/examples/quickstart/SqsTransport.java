package io.outbox4j.examples.quickstart;

import io.outbox4j.api.OutboxHeaders;
import io.outbox4j.api.Publisher;
import io.outbox4j.publisher.sqs.SqsPublisher;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * SQS: events go to a FIFO queue (so per-key order holds: the key is the message group) named after
 * the topic, with dots replaced by dashes.
 */
final class SqsTransport implements Transport {
    private final URI endpoint;
    private final SqsClient client;
    private final SqsPublisher publisher;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private Thread consumerThread;

    SqsTransport(URI endpoint) {
        this.endpoint = endpoint;
        String region = System.getenv().getOrDefault("AWS_REGION", "us-east-1");
        AwsCredentialsProvider credentials =
                System.getenv("AWS_ACCESS_KEY_ID") != null
                        ? DefaultCredentialsProvider.builder().build()
                        : StaticCredentialsProvider.create(
                                AwsBasicCredentials.create("quickstart", "quickstart"));
        this.client =
                SqsClient.builder()
                        .endpointOverride(endpoint)
                        .region(Region.of(region))
                        .credentialsProvider(credentials)
                        .build();
        // tag::sqs-publisher[]
        this.publisher =
                SqsPublisher.builder()
                        .client(client)
                        .queueNameMapper(m -> queueName(m.topic()))
                        .build();
        // end::sqs-publisher[]
    }

    static SqsTransport of(URI uri) {
        String scheme = uri.getScheme().equalsIgnoreCase("sqs+https") ? "https" : "http";
        return new SqsTransport(
                URI.create(
                        scheme
                                + "://"
                                + uri.getHost()
                                + (uri.getPort() < 0 ? "" : ":" + uri.getPort())));
    }

    private static String queueName(String topic) {
        return topic.replace('.', '-') + ".fifo";
    }

    @Override
    public void prepare(String topic, java.time.Duration timeout) {
        client.createQueue(
                b ->
                        b.queueName(queueName(topic))
                                .attributes(Map.of(QueueAttributeName.FIFO_QUEUE, "true")));
    }

    @Override
    public Publisher publisher() {
        return publisher;
    }

    @Override
    public void startConsumer(String topic, Tally tally) {
        String url = client.getQueueUrl(b -> b.queueName(queueName(topic))).queueUrl();
        consumerThread =
                new Thread(
                        () -> {
                            while (running.get()) {
                                List<Message> batch =
                                        client.receiveMessage(
                                                        b ->
                                                                b.queueUrl(url)
                                                                        .maxNumberOfMessages(10)
                                                                        .waitTimeSeconds(1)
                                                                        .messageAttributeNames(
                                                                                "All"))
                                                .messages();
                                if (batch.isEmpty()) {
                                    continue;
                                }
                                for (Message m : batch) {
                                    var attrs = m.messageAttributes();
                                    String headers = attrs.get(OutboxHeaders.HEADERS).stringValue();
                                    tally.record(
                                            attrs.get(OutboxHeaders.ID).stringValue(),
                                            attrs.get(OutboxHeaders.KEY).stringValue(),
                                            seqFrom(headers));
                                }
                                client.deleteMessageBatch(
                                        b ->
                                                b.queueUrl(url)
                                                        .entries(
                                                                batch.stream()
                                                                        .map(
                                                                                m ->
                                                                                        DeleteMessageBatchRequestEntry
                                                                                                .builder()
                                                                                                .id(
                                                                                                        m.messageId()
                                                                                                                .replaceAll(
                                                                                                                        "[^A-Za-z0-9_-]",
                                                                                                                        "_"))
                                                                                                .receiptHandle(
                                                                                                        m
                                                                                                                .receiptHandle())
                                                                                                .build())
                                                                        .toList()));
                            }
                        },
                        "quickstart-sqs-consumer");
        consumerThread.setDaemon(true);
        consumerThread.start();
    }

    /** Reads the per-key sequence number out of the JSON object of user headers. */
    private static long seqFrom(String headersJson) {
        String marker = "\"" + SEQ_HEADER + "\":\"";
        int at = headersJson.indexOf(marker);
        if (at < 0) {
            throw new IllegalStateException(
                    "event has no " + SEQ_HEADER + " header: " + headersJson);
        }
        int from = at + marker.length();
        return Long.parseLong(headersJson.substring(from, headersJson.indexOf('"', from)));
    }

    @Override
    public String describe() {
        return "SQS FIFO (" + endpoint + ")";
    }

    @Override
    public void close() {
        Transport.stopConsumer(running, consumerThread);
        client.close();
    }
}
