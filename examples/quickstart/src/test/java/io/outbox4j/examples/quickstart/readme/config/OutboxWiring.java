package io.outbox4j.examples.quickstart.readme.config;

import io.outbox4j.engine.Relay;
import io.outbox4j.examples.quickstart.readme.persistence.OrderRepository;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.time.Duration;
import org.jdbi.v3.core.Jdbi;

/** The README's composition root: builds the store, the publisher and the relay. */
public final class OutboxWiring {
    private OutboxWiring() {}

    public static Relay wire(Jdbi jdbi, String bootstrap) {
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        new OrderRepository(jdbi, store);
        KafkaPublisher publisher = KafkaPublisher.builder().bootstrapServers(bootstrap).build();
        return Relay.builder(store, publisher)
                .batchSize(250)
                .workers(4)
                .deliveryTimeout(Duration.ofSeconds(10))
                .build();
    }
}
