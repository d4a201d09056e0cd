package io.outbox4j.faulttests;

import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.publisher.sqs.SqsPublisher;
import io.outbox4j.testservices.ElasticMqNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * A FIFO queue on a private {@link ElasticMqNode}, counted by a consumer that receives, records and
 * deletes. While the server is down the consumer's calls fail and it tries again every 100 ms; the
 * drill re-creates the queue after a restart ({@link #recreateQueue()}).
 */
final class SqsSink implements Sink {
    private final ElasticMqNode node;
    private final String queue;
    private final KeyedLoad load;
    private final DeliveryLedger ledger;
    private final SqsClient client;
    private final List<SqsAsyncClient> publisherClients = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong failedCalls = new AtomicLong();
    private final Map<Integer, Long> acceptedAt = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean running = true;

    private SqsSink(ElasticMqNode node, String queue, KeyedLoad load, DeliveryLedger ledger) {
        this.node = node;
        this.queue = queue;
        this.load = load;
        this.ledger = ledger;
        this.client =
                SqsClient.builder()
                        .endpointOverride(node.endpoint())
                        .region(Region.US_EAST_1)
                        .credentialsProvider(credentials())
                        .build();
        this.thread = new Thread(this::run, "fault-tally-" + queue);
        thread.setDaemon(true);
    }

    /** A factory of sinks on this node. */
    static Sink.Factory on(ElasticMqNode node) {
        return (queue, load, ledger) -> {
            SqsSink sink = new SqsSink(node, queue, load, ledger);
            sink.recreateQueue();
            sink.thread.start();
            return sink;
        };
    }

    private static StaticCredentialsProvider credentials() {
        return StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));
    }

    /**
     * Creates the FIFO queue (again, after a restart lost it); the publisher sends each key as a
     * message group, so SQS keeps the order per key that the relay publishes in.
     */
    void recreateQueue() {
        client.createQueue(
                b ->
                        b.queueName(queue + ".fifo")
                                .attributes(Map.of(QueueAttributeName.FIFO_QUEUE, "true")));
    }

    /** The consumer's calls that failed (while the server was down or the queue missing). */
    long failedCalls() {
        return failedCalls.get();
    }

    private void run() {
        String url = null;
        while (running) {
            try {
                if (url == null) {
                    url = client.getQueueUrl(b -> b.queueName(queue + ".fifo")).queueUrl();
                }
                String u = url;
                List<Message> got =
                        client.receiveMessage(
                                        b ->
                                                b.queueUrl(u)
                                                        .maxNumberOfMessages(10)
                                                        .waitTimeSeconds(1)
                                                        .visibilityTimeout(30))
                                .messages();
                if (got.isEmpty()) {
                    continue;
                }
                List<DeleteMessageBatchRequestEntry> delete = new ArrayList<>();
                for (Message m : got) {
                    int seq = KeyedLoad.seqOfPayload(m.body().getBytes(StandardCharsets.UTF_8));
                    ledger.record(
                            seq < 0 ? "" : load.key(seq), seq, "?", System.currentTimeMillis());
                    delete.add(
                            DeleteMessageBatchRequestEntry.builder()
                                    .id(Integer.toString(delete.size()))
                                    .receiptHandle(m.receiptHandle())
                                    .build());
                }
                client.deleteMessageBatch(b -> b.queueUrl(u).entries(delete));
            } catch (SdkException e) {
                failedCalls.incrementAndGet();
                url = null;
                pause();
            } catch (RuntimeException | Error e) {
                failure.set(e);
                return;
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public Publisher publisher(String relay, RelaySettings settings) {
        SqsAsyncClient async =
                SqsAsyncClient.builder()
                        .endpointOverride(node.endpoint())
                        .region(Region.US_EAST_1)
                        .credentialsProvider(credentials())
                        .build();
        synchronized (publisherClients) {
            publisherClients.add(async);
        }
        SqsPublisher sqs =
                SqsPublisher.builder()
                        .asyncClient(async)
                        .queueNameMapper(m -> m.topic() + ".fifo")
                        .apiCallAttemptTimeout(Duration.ofSeconds(1))
                        .apiCallTimeout(Duration.ofSeconds(2))
                        .build();
        return new Publisher() {
            @Override
            public List<PublishOutcome> publish(
                    List<io.outbox4j.api.Message> messages, Duration timeout) {
                List<PublishOutcome> outcomes = sqs.publish(messages, timeout);
                long now = System.currentTimeMillis();
                for (int i = 0; i < outcomes.size(); i++) {
                    if (outcomes.get(i).isPublished()) {
                        acceptedAt.putIfAbsent(load.seqOf(messages.get(i).id()), now);
                    }
                }
                return outcomes;
            }

            @Override
            public void close() {
                sqs.close();
            }
        };
    }

    /**
     * The messages the consumer never read that SQS had accepted by {@code millis}: what an
     * in-memory ElasticMQ stopped at that moment lost with its queue.
     */
    List<Integer> unreadAcceptedBy(long millis) {
        List<Integer> out = new ArrayList<>();
        for (int seq : ledger.missing(Integer.MAX_VALUE)) {
            Long at = acceptedAt.get(seq);
            if (at != null && at <= millis) {
                out.add(seq);
            }
        }
        return out;
    }

    @Override
    public void checkHealthy() {
        Sink.throwIfFailed(failure.get());
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        client.close();
        synchronized (publisherClients) {
            publisherClients.forEach(SqsAsyncClient::close);
        }
    }
}
