package io.outbox4j.faulttests;

import io.outbox4j.api.Publisher;
import java.util.Map;

/** A topic of four partitions on the drills' Kafka broker, counted by a {@link KafkaTally}. */
final class KafkaSink implements Sink {
    private final String bootstrapServers;
    private final KafkaTally tally;

    private KafkaSink(String bootstrapServers, KafkaTally tally) {
        this.bootstrapServers = bootstrapServers;
        this.tally = tally;
    }

    static Sink open(String topic, KeyedLoad load, DeliveryLedger ledger) {
        String bootstrap = Drill.broker().bootstrapServers();
        Drill.broker().createTopic(topic, 4, Map.of("message.timestamp.type", "LogAppendTime"));
        return new KafkaSink(bootstrap, KafkaTally.start(bootstrap, topic, ledger));
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public Publisher publisher(String relay, RelaySettings settings) {
        return FaultRelays.kafkaPublisher(bootstrapServers, relay, settings);
    }

    @Override
    public void checkHealthy() {
        tally.checkHealthy();
    }

    @Override
    public void close() {
        tally.close();
    }
}
