package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * One Micrometer observation per published message: a sender (producer) context whose handlers can
 * write headers that reach the broker, a timer by outcome with a meter handler.
 */
class OutboxObservationsTest {
    @Test
    void eachMessageIsObserved_andHeadersWrittenByAHandlerReachThePublisher() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        List<Observation.Context> started = new CopyOnWriteArrayList<>();
        ObservationRegistry observationRegistry = ObservationRegistry.create();
        observationRegistry
                .observationConfig()
                .observationHandler(new DefaultMeterObservationHandler(meters))
                .observationHandler(new InjectingHandler(started));
        Map<String, Message> sent = new ConcurrentHashMap<>();
        Publisher publisher =
                Publisher.perMessage(
                        m -> {
                            sent.put(m.id(), m);
                            if (m.id().equals("m2")) {
                                throw new RetryableFailureException("broker busy");
                            }
                        });

        // tag::observation[]
        Publisher observed = OutboxObservations.publisher(observationRegistry, publisher);
        // end::observation[]
        List<PublishOutcome> outcomes =
                observed.publish(List.of(message("m1"), message("m2")), Duration.ofSeconds(5));

        assertThat(outcomes).extracting(PublishOutcome::isPublished).containsExactly(true, false);
        assertThat(started)
                .extracting(Observation.Context::getContextualName)
                .containsExactly("send orders", "send orders");
        assertThat(started.get(0).getHighCardinalityKeyValue("messaging.message.id").getValue())
                .isEqualTo("m1");
        assertThat(sent.get("m1").headers())
                .containsEntry("traceparent", "written-for-m1")
                .containsEntry("seq", "m1");
        assertThat(
                        meters.get(OutboxObservations.NAME)
                                .tag("outcome", "published")
                                .tag("messaging.destination.name", "orders")
                                .timer()
                                .count())
                .isEqualTo(1);
        assertThat(
                        meters.get(OutboxObservations.NAME)
                                .tag("outcome", "failed")
                                .tag("error", "RetryableFailureException")
                                .timer()
                                .count())
                .isEqualTo(1);
    }

    @Test
    void withANoopRegistry_messagesPassThroughUntouched() {
        Map<String, Message> sent = new ConcurrentHashMap<>();
        Message m1 = message("m1");
        OutboxObservations.publisher(
                        ObservationRegistry.NOOP, Publisher.perMessage(m -> sent.put(m.id(), m)))
                .publish(List.of(m1), Duration.ofSeconds(5));
        assertThat(sent.get("m1")).isSameAs(m1);
    }

    private static Message message(String id) {
        return Orders.order(id).header("seq", id).build();
    }

    /** Stands in for a tracing handler: writes a header into the message's carrier on start. */
    private static final class InjectingHandler implements ObservationHandler<SenderContext<?>> {
        private final List<Observation.Context> started;

        InjectingHandler(List<Observation.Context> started) {
            this.started = started;
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return context instanceof SenderContext;
        }

        @Override
        public void onStart(SenderContext<?> context) {
            started.add(context);
            inject(
                    context,
                    "written-for-"
                            + context.getHighCardinalityKeyValue("messaging.message.id")
                                    .getValue());
        }

        private static <C> void inject(SenderContext<C> context, String value) {
            context.getSetter().set(context.getCarrier(), "traceparent", value);
        }
    }
}
