package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * The README's example, run: a relay over a Jdbi store on H2, observed by {@link OutboxMetrics},
 * with the backlog read through the store's real statistics query. The tagged regions are the
 * README's snippets ({@link ReadmeSnippetsTest}).
 */
class ReadmeExampleTest {
    @Test
    void readmeExample_countsTheDeliveryAndReadsTheBacklogOfAJdbiStore() throws Exception {
        Jdbi jdbi = Jdbi.create("jdbc:h2:mem:micrometer-readme;DB_CLOSE_DELAY=-1");
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        Publisher publisher = Publisher.perMessage(m -> {});
        MeterRegistry meterRegistry = new SimpleMeterRegistry();

        // tag::micrometer[]
        OutboxMetrics metrics =
                OutboxMetrics.builder(meterRegistry)
                        .admin(store) // backlog gauges, read every 30 s on a daemon thread
                        .tags(Tags.of("outbox", "orders"))
                        .build();
        Relay relay =
                Relay.builder(metrics.store(store), publisher) // times claims, completions…
                        .observer(metrics)
                        .build();
        metrics.relay(relay); // relay state gauges
        relay.start();
        // end::micrometer[]

        jdbi.useTransaction(
                h ->
                        store.enqueueAll(
                                h,
                                List.of(
                                        Orders.order("order-1").build(),
                                        Orders.order("order-2")
                                                .notBefore(Instant.now().plus(Duration.ofHours(1)))
                                                .build())));
        relay.wakeUp();
        Awaitility.await("order-1 completed")
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> completed(meterRegistry) >= 1);
        metrics.refresh(); // what the schedule does every 30 s

        assertThat(completed(meterRegistry)).isEqualTo(1);
        assertThat(
                        meterRegistry
                                .get(OutboxMetrics.MESSAGES)
                                .tags("outbox", "orders", "topic", "orders", "state", "delayed")
                                .gauge()
                                .value())
                .as("order-2 waits for its notBefore")
                .isEqualTo(1);
        assertThat(
                        meterRegistry
                                .get(OutboxMetrics.MESSAGES)
                                .tags("topic", "orders", "state", "ready")
                                .gauge()
                                .value())
                .isZero();

        // tag::micrometer-close[]
        relay.close(); // first the relay, then its observer
        metrics.close(); // stops the statistics schedule, removes the meters
        // end::micrometer-close[]
        assertThat(meterRegistry.getMeters()).isEmpty();
    }

    private static double completed(MeterRegistry registry) {
        Counter c =
                registry.find(OutboxMetrics.DELIVERIES)
                        .tags("topic", "orders", "outcome", "completed")
                        .counter();
        return c == null ? 0 : c.count();
    }
}
