/**
 * Micrometer metrics for outbox4j: {@link io.outbox4j.micrometer.OutboxMetrics} binds a relay (as
 * its observer) and a store (through its admin port) to a {@code MeterRegistry}; {@link
 * io.outbox4j.micrometer.OutboxObservations} observes each published message with a Micrometer
 * {@code Observation}, so Micrometer Tracing users get a producer span per message.
 *
 * <p>Nulls are decided once and checked by the compiler (JSpecify {@code @NullMarked}, NullAway):
 * no method accepts or returns {@code null} unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.outbox4j.micrometer;

import org.jspecify.annotations.NullMarked;
