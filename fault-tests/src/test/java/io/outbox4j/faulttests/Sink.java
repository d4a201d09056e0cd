package io.outbox4j.faulttests;

import io.outbox4j.api.Publisher;
import org.jspecify.annotations.Nullable;

/**
 * Where a drill's relays publish, and the counting consumer that reads it back into the drill's
 * {@link DeliveryLedger}: Kafka ({@link KafkaSink}), RabbitMQ ({@link RabbitSink}) or SQS ({@link
 * SqsSink}).
 */
interface Sink extends AutoCloseable {
    /** Opens a sink for one drill: its destination exists and its consumer runs when returned. */
    @FunctionalInterface
    interface Factory {
        /**
         * Opens the sink.
         *
         * @param destination the topic / queue name (also every message's topic)
         * @param load the drill's messages
         * @param ledger where the consumer records what it reads
         * @return the open sink
         */
        Sink open(String destination, KeyedLoad load, DeliveryLedger ledger);
    }

    /**
     * A publisher for one relay; its records name the relay where the transport lets them.
     *
     * @param relay the relay's name
     * @param settings the drill settings
     * @return a new publisher; the relay's owner closes it
     */
    Publisher publisher(String relay, RelaySettings settings);

    /** Throws what ended the counting consumer, if anything did. */
    void checkHealthy();

    /** Throws {@code failure} of a counting consumer wrapped, if there is one. */
    static void throwIfFailed(@Nullable Throwable failure) {
        if (failure != null) {
            throw new IllegalStateException("the counting consumer failed: " + failure, failure);
        }
    }

    /** Stops the consumer. */
    @Override
    void close();
}
