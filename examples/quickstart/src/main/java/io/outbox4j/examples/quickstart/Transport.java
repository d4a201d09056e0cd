package io.outbox4j.examples.quickstart;

import io.outbox4j.api.Publisher;

/** A broker the quickstart publishes to and reads back from. */
interface Transport extends AutoCloseable {
    /**
     * Creates the destination for the topic (a Kafka topic, a durable queue, an SQS queue), giving
     * up after {@code timeout} (the {@code --timeout} option) with a message naming the broker.
     */
    void prepare(String topic, java.time.Duration timeout);

    /** The outbox4j publisher for this broker. */
    Publisher publisher();

    /** Starts reading the topic back on a background thread, feeding every event to the tally. */
    void startConsumer(String topic, Tally tally);

    /** Says which broker this is, for the summary. */
    String describe();

    /** The per-key sequence number header the order service puts on every event. */
    String SEQ_HEADER = "customer-seq";

    @Override
    void close();

    /**
     * Stops a consumer loop that runs while {@code running} is set, waiting up to 5 s for its
     * thread.
     */
    static void stopConsumer(java.util.concurrent.atomic.AtomicBoolean running, Thread consumer) {
        running.set(false);
        if (consumer != null) {
            try {
                consumer.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
