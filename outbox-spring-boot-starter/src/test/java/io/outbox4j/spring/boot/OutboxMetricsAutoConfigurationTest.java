package io.outbox4j.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox4j.api.Message;
import io.outbox4j.api.Publisher;
import io.outbox4j.micrometer.OutboxMetrics;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.transaction.support.TransactionTemplate;

/** With Micrometer present the starter binds outbox4j's meters: relay observer, gauges, backlog. */
class OutboxMetricsAutoConfigurationTest {
    private final RecordingPublisher publisher = new RecordingPublisher();

    private final ApplicationContextRunner runner =
            StarterContexts.onH2(OutboxMetricsAutoConfiguration.class)
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .withBean(Publisher.class, () -> publisher)
                    .withPropertyValues("outbox4j.store.jdbc.create-schema=true");

    @Test
    @DisplayName(
            "a MeterRegistry bean: deliveries counted, the running relay's state, publishing and backlog gauges registered")
    void metersBoundWhenMicrometerIsPresent() {
        runner.run(
                context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(OutboxMetrics.class);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    context.getBean(TransactionTemplate.class)
                            .executeWithoutResult(
                                    tx ->
                                            context.getBean(TransactionalOutbox.class)
                                                    .enqueue(
                                                            Message.builder()
                                                                    .id("m-1")
                                                                    .topic("orders")
                                                                    .module("shop")
                                                                    .payload("{}")
                                                                    .build()));
                    await().atMost(Duration.ofSeconds(10))
                            .until(
                                    () ->
                                            registry.find(OutboxMetrics.DELIVERIES)
                                                            .tag("outcome", "completed")
                                                            .counter()
                                                    != null);
                    assertThat(
                                    registry.get(OutboxMetrics.RELAY_STATE)
                                            .tag("state", "running")
                                            .gauge()
                                            .value())
                            .isEqualTo(1);
                    assertThat(registry.find(OutboxMetrics.RELAY_PUBLISH_STALLED).timeGauge())
                            .isNotNull();
                    assertThat(registry.find(OutboxMetrics.BLOCKED_KEYS).gauge())
                            .as("backlog gauges read through the store's admin port")
                            .isNotNull();
                });
    }

    @Test
    @DisplayName("outbox4j.metrics.enabled=false binds nothing")
    void turnedOff() {
        runner.withPropertyValues("outbox4j.metrics.enabled=false")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(OutboxMetrics.class);
                            assertThat(
                                            context.getBean(MeterRegistry.class)
                                                    .find(OutboxMetrics.RELAY_STATE)
                                                    .gauges())
                                    .isEmpty();
                        });
    }
}
