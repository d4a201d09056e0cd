package io.outbox4j.spring.boot.modulith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox4j.api.Message;
import io.outbox4j.api.Publisher;
import io.outbox4j.spring.boot.RecordingPublisher;
import io.outbox4j.spring.boot.StarterContexts;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.Externalized;
import org.springframework.modulith.events.support.DelegatingEventExternalizer;
import org.springframework.modulith.events.support.EventExternalizationTransport;
import org.springframework.modulith.events.support.EventExternalizerModuleListener;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Spring Modulith's {@code @Externalized} events go through outbox4j: enqueued in the publishing
 * transaction, routed by the annotation (SpEL key included), serialized as JSON, and published by
 * the relay.
 */
class OutboxModulithTest {
    /** An event Modulith externalizes to "orders", keyed by customer. */
    @Externalized("orders::#{customerId()}")
    public record OrderPlaced(String orderId, String customerId) {}

    /** An event that stays inside the application. */
    public record OrderViewed(String orderId) {}

    private final RecordingPublisher publisher = new RecordingPublisher();

    private final ApplicationContextRunner runner =
            StarterContexts.onH2(OutboxModulithAutoConfiguration.class)
                    .withBean(Publisher.class, () -> publisher)
                    .withBean(
                            EventExternalizationConfiguration.class,
                            () ->
                                    EventExternalizationConfiguration.defaults(
                                                    OutboxModulithTest.class.getPackageName())
                                            .build())
                    .withPropertyValues(
                            "spring.application.name=shop",
                            "outbox4j.store.jdbc.create-schema=true");

    @Test
    @DisplayName(
            "an @Externalized event published in a committed transaction reaches the publisher: topic and SpEL key from the annotation, JSON payload")
    void externalizedEventIsPublished() {
        runner.run(
                context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(TransactionTemplate.class)
                            .executeWithoutResult(
                                    tx -> {
                                        context.publishEvent(new OrderPlaced("o-1", "c-7"));
                                        context.publishEvent(new OrderViewed("o-1"));
                                    });
                    // the witness that the relay had its chance to publish OrderViewed too: an
                    // event committed after it is published
                    context.getBean(TransactionTemplate.class)
                            .executeWithoutResult(
                                    tx -> context.publishEvent(new OrderPlaced("o-2", "c-7")));
                    awaitPublished("o-2");
                    List<Message> published = publisher.published();
                    assertThat(published).as("only the @Externalized events").hasSize(2);
                    Message m = published.get(0);
                    assertThat(m.topic()).isEqualTo("orders");
                    assertThat(m.key()).contains("c-7");
                    assertThat(m.module()).isEqualTo("shop");
                    assertThat(m.contentType()).isEqualTo("application/json");
                    assertThat(new String(m.payload(), StandardCharsets.UTF_8))
                            .contains("\"orderId\":\"o-1\"")
                            .contains("\"customerId\":\"c-7\"");
                });
    }

    @Test
    @DisplayName("an @Externalized event whose transaction rolls back is never published")
    void rolledBackEventIsNeverPublished() {
        runner.run(
                context -> {
                    TransactionTemplate tx = context.getBean(TransactionTemplate.class);
                    assertThatThrownBy(
                                    () ->
                                            tx.executeWithoutResult(
                                                    status -> {
                                                        context.publishEvent(
                                                                new OrderPlaced("o-lost", "c-1"));
                                                        throw new IllegalStateException("declined");
                                                    }))
                            .hasMessage("declined");
                    tx.executeWithoutResult(
                            status -> context.publishEvent(new OrderPlaced("o-kept", "c-1")));
                    awaitPublished("o-kept");
                    assertThat(publisher.published())
                            .noneMatch(m -> m.payloadAsString().contains("o-lost"));
                });
    }

    @Test
    @DisplayName(
            "an @Externalized event published outside a transaction fails the publishEvent call")
    void eventOutsideTransactionIsRefused() {
        runner.run(
                context ->
                        assertThatThrownBy(
                                        () -> context.publishEvent(new OrderPlaced("o-2", "c-2")))
                                .hasMessageContaining(
                                        "needs an active Spring-managed transaction"));
    }

    private static final EventExternalizationConfiguration CONFIG =
            EventExternalizationConfiguration.defaults(OutboxModulithTest.class.getPackageName())
                    .build();

    private static final EventExternalizationTransport TRANSPORT =
            (payload, target) -> CompletableFuture.completedFuture(null);

    @Test
    @DisplayName(
            "Modulith 2.0 style: a broker module's DelegatingEventExternalizer stops the start, naming it")
    @SuppressWarnings("removal") // Modulith 2.1 deprecates it for removal; 2.0 registers it
    void modulith20Externalizer_stopsTheStart() {
        runner.withBean(
                        "kafkaEventExternalizer",
                        DelegatingEventExternalizer.class,
                        () ->
                                new DelegatingEventExternalizer(
                                        CONFIG,
                                        (target, event) -> CompletableFuture.completedFuture(null)))
                .run(
                        refused(
                                "kafkaEventExternalizer (DelegatingEventExternalizer)",
                                "a second time",
                                "outbox4j.modulith.enabled=false"));
    }

    @Test
    @DisplayName(
            "Modulith 2.1 style: a broker module's EventExternalizerModuleListener stops the start, naming it")
    void modulith21ModuleListener_stopsTheStart() {
        runner.withBean(
                        "eventExternalizerModuleListener",
                        EventExternalizerModuleListener.class,
                        () -> new EventExternalizerModuleListener(CONFIG, TRANSPORT))
                .run(
                        refused(
                                "eventExternalizerModuleListener (EventExternalizerModuleListener)",
                                "a second time"));
    }

    @Test
    @DisplayName(
            "Modulith 2.1 style: a broker module's EventExternalizationTransport alone stops the start")
    void modulith21Transport_stopsTheStart() {
        runner.withBean("kafkaTransport", EventExternalizationTransport.class, () -> TRANSPORT)
                .run(refused("kafkaTransport (EventExternalizationTransport)"));
    }

    @Test
    @DisplayName(
            "spring.modulith.events.externalization.mode=outbox (Modulith's own outbox) stops the start; module-listener does not")
    void externalizationModeOutbox_stopsTheStart() {
        runner.withPropertyValues("spring.modulith.events.externalization.mode=outbox")
                .run(
                        refused(
                                "spring.modulith.events.externalization.mode=outbox",
                                "a second time"));
        runner.withPropertyValues("spring.modulith.events.externalization.mode=module-listener")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    @DisplayName(
            "outbox4j.modulith.enabled=false leaves externalization to Modulith: its transport no longer stops the start")
    void disabled_leavesModulithsExternalizerAlone() {
        runner.withBean(EventExternalizationTransport.class, () -> TRANSPORT)
                .withPropertyValues("outbox4j.modulith.enabled=false")
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context).doesNotHaveBean(ExternalizedEventRecorder.class);
                        });
    }

    /** Two named outboxes on the application's DataSource, in two tables. */
    private ApplicationContextRunner twoOutboxes() {
        return StarterContexts.onH2(OutboxModulithAutoConfiguration.class)
                .withBean(Publisher.class, () -> publisher)
                .withBean(EventExternalizationConfiguration.class, () -> CONFIG)
                .withPropertyValues(
                        "spring.application.name=shop",
                        "outbox4j.outboxes.orders.store.jdbc.create-schema=true",
                        "outbox4j.outboxes.billing.store.jdbc.create-schema=true",
                        "outbox4j.outboxes.billing.store.jdbc.table-name=billing_outbox");
    }

    @Test
    @DisplayName(
            "several named outboxes and none chosen: the start stops, naming outbox4j.modulith.outbox and the outboxes")
    void severalOutboxes_noneChosen_stopsTheStart() {
        twoOutboxes()
                .run(
                        context ->
                                StarterContexts.assertRefusedExactly(
                                        context,
                                        "outbox4j.modulith.outbox",
                                        "must name the outbox Spring Modulith's externalized events"
                                                + " go to, as the application has several [orders,"
                                                + " billing] and none is primary; set it, or mark one"
                                                + " outbox4j.outboxes.<name>.primary=true (or"
                                                + " outbox4j.modulith.enabled=false)"));
        twoOutboxes()
                .withPropertyValues("outbox4j.modulith.outbox=shipping")
                .run(
                        context -> {
                            InvalidConfigurationPropertyValueException invalid =
                                    StarterContexts.assertRefusedExactly(
                                            context,
                                            "outbox4j.modulith.outbox",
                                            "names no outbox; the outboxes are [orders, billing]");
                            assertThat(invalid.getValue()).isEqualTo("shipping");
                        });
    }

    @Test
    @DisplayName(
            "several named outboxes: events go to the primary one, or to the one outbox4j.modulith.outbox names")
    void severalOutboxes_primaryOrChosen_getsTheEvents() {
        // Only the outbox that should get the event runs a relay: the event is published only if
        // it was enqueued there.
        twoOutboxes()
                .withPropertyValues(
                        "outbox4j.outboxes.billing.primary=true",
                        "outbox4j.outboxes.orders.relay.enabled=false")
                .run(context -> publishedThrough(context, "o-primary", "outbox_message"));
        twoOutboxes()
                .withPropertyValues(
                        "outbox4j.outboxes.billing.primary=true",
                        "outbox4j.modulith.outbox=orders",
                        "outbox4j.outboxes.billing.relay.enabled=false")
                .run(context -> publishedThrough(context, "o-chosen", "billing_outbox"));
    }

    /** Waits until the publisher has published a message whose payload says {@code fragment}. */
    private void awaitPublished(String fragment) {
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                publisher.published().stream()
                                        .anyMatch(m -> m.payloadAsString().contains(fragment)));
    }

    /** The event is published, and the outbox without a relay ({@code idle}) holds nothing. */
    private void publishedThrough(
            AssertableApplicationContext context, String orderId, String idle) {
        assertThat(context).hasNotFailed();
        context.getBean(TransactionTemplate.class)
                .executeWithoutResult(tx -> context.publishEvent(new OrderPlaced(orderId, "c-1")));
        awaitPublished(orderId);
        assertThat(
                        new org.springframework.jdbc.core.JdbcTemplate(
                                        context.getBean(javax.sql.DataSource.class))
                                .queryForObject(
                                        "SELECT count(*) FROM \"" + idle + "\"", Long.class))
                .isZero();
    }

    /** The start failed, and its root cause says each of {@code fragments}. */
    private static ContextConsumer<AssertableApplicationContext> refused(String... fragments) {
        return context -> {
            for (String f : fragments) {
                assertThat(context).getFailure().rootCause().hasMessageContaining(f);
            }
        };
    }
}
