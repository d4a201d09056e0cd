package io.outbox4j.faulttests;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerConfig;

/** Builds the relays and publishers of the drills the same way in this JVM and in child JVMs. */
public final class FaultRelays {
    private FaultRelays() {}

    /**
     * A relay over a store and a publisher with the drill settings.
     *
     * @param store the store (usually a {@link LeaseJournal})
     * @param publisher the publisher
     * @param owner the relay's owner name
     * @param settings the settings
     * @param observer told about each delivery attempt
     * @return the relay, not started; a member of the outbox with {@link
     *     RelaySettings#memberLease()} when the settings say so (the store must then be an {@link
     *     io.outbox4j.api.OutboxMembership}, as a {@link LeaseJournal} over {@code JdbiOutboxStore}
     *     is), otherwise not a member
     */
    public static Relay relay(
            OutboxStore store,
            Publisher publisher,
            String owner,
            RelaySettings settings,
            Observer observer) {
        Relay.Builder b =
                settings.member()
                        ? Relay.builder(store, publisher).memberLease(settings.memberLease())
                        : Relay.builder(store, publisher).membership(false);
        return b.observer(observer)
                .clock(Clock.offset(Clock.systemUTC(), settings.clockOffset()))
                .owner(owner)
                .batchSize(settings.batchSize())
                .workers(settings.workers())
                .deliveryTimeout(settings.deliveryTimeout())
                .lease(settings.lease())
                .pollInterval(settings.pollInterval())
                .backoff(Backoff.fixed(settings.backoff()))
                .maxAttempts(settings.maxAttempts())
                .shutdownTimeout(Duration.ofSeconds(10))
                .build();
    }

    /**
     * A Kafka publisher whose records carry the relay's name ({@link RelayTagInterceptor}), with
     * the producer's delivery timeout equal to the relay's and quick reconnects.
     *
     * @param bootstrapServers the broker
     * @param relay the relay's name, stamped on each record
     * @param settings the drill settings
     * @return the publisher; the caller closes it
     */
    public static KafkaPublisher kafkaPublisher(
            String bootstrapServers, String relay, RelaySettings settings) {
        return KafkaPublisher.builder()
                .bootstrapServers(bootstrapServers)
                .deliveryTimeout(settings.deliveryTimeout())
                .closeTimeout(Duration.ofSeconds(2))
                .producerProperty(
                        ProducerConfig.INTERCEPTOR_CLASSES_CONFIG,
                        RelayTagInterceptor.class.getName())
                .producerProperty(RelayTagInterceptor.RELAY_CONFIG, relay)
                .producerProperty(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 50)
                .producerProperty(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500)
                .build();
    }

    /**
     * Puts a fixed pause (the round trip to a remote broker) in front of each publisher call.
     *
     * @param delegate the real publisher
     * @param latency the pause; zero returns {@code delegate}
     * @return the publisher to give the relay
     */
    public static Publisher withLinkLatency(Publisher delegate, Duration latency) {
        if (latency.isZero()) {
            return delegate;
        }
        return new Publisher() {
            @Override
            public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
                try {
                    Thread.sleep(latency.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    List<PublishOutcome> failed = new ArrayList<>(messages.size());
                    messages.forEach(m -> failed.add(PublishOutcome.failed(e)));
                    return failed;
                }
                return delegate.publish(messages, timeout);
            }

            @Override
            public void close() {
                delegate.close();
            }
        };
    }
}
