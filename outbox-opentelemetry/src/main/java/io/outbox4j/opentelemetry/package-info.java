/**
 * Trace propagation for outbox4j with the OpenTelemetry API: {@link
 * io.outbox4j.opentelemetry.OutboxTracing} stores the W3C trace context of the enqueuing
 * transaction with each message and publishes each message in a producer span that continues it.
 *
 * <p>Nulls are decided once and checked by the compiler (JSpecify {@code @NullMarked}, NullAway):
 * no method accepts or returns {@code null} unless it is annotated {@code @Nullable}.
 */
@NullMarked
package io.outbox4j.opentelemetry;

import org.jspecify.annotations.NullMarked;
