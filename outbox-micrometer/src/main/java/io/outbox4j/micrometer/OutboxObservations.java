package io.outbox4j.micrometer;

import io.micrometer.observation.ObservationRegistry;
import io.outbox4j.api.Publisher;

/**
 * A Micrometer {@link io.micrometer.observation.Observation} per published message, for
 * applications whose tracing runs on Micrometer Tracing (Spring Boot's default).
 *
 * <pre>{@code
 * Publisher traced = OutboxObservations.publisher(observationRegistry, kafkaPublisher);
 * Relay relay = Relay.builder(store, traced).observer(metrics).build();
 * }</pre>
 *
 * Each message of a publisher call gets an observation named {@value #NAME} (contextual name {@code
 * send <topic>}) of kind producer ({@link io.micrometer.observation.transport.SenderContext}),
 * started before the call and stopped when it returns, with the error of a failed message. A
 * tracing handler therefore opens a producer span per message and writes its context into the
 * message's headers, which the publishers pass on (Kafka and AMQP headers; on SQS inside the {@code
 * outbox-headers} attribute), so a consumer continues the trace. With a meter handler the
 * observation is also a timer {@value #NAME}.
 *
 * <p>Key values: low cardinality {@code messaging.destination.name} (the topic), {@code
 * messaging.operation.type} ({@code send}), {@code outcome} ({@code published} or {@code failed});
 * high cardinality {@code messaging.message.id}.
 *
 * <p>The span's parent is whatever observation is current on the relay's thread (usually none):
 * Micrometer's observation API cannot continue a context stored with the message. To make the
 * publish span a child of the transaction that enqueued the message, use the {@code
 * outbox-opentelemetry} module instead (it works with Micrometer Tracing's OpenTelemetry bridge
 * too). Use one of the two, not both.
 */
public final class OutboxObservations {
    /** The observation's name (and the timer's, with a meter handler). */
    public static final String NAME = "outbox.send";

    private OutboxObservations() {}

    /**
     * Wraps a publisher so that each message it publishes is observed.
     *
     * @param registry the observation registry; with a no-op registry the messages pass through
     *     untouched
     * @param delegate the publisher that sends the messages
     * @return the observing publisher; closing it closes {@code delegate}
     * @throws IllegalArgumentException if an argument is null
     */
    public static Publisher publisher(ObservationRegistry registry, Publisher delegate) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        if (delegate == null) {
            throw new IllegalArgumentException("delegate must not be null");
        }
        return new ObservedPublisher(registry, delegate);
    }
}
