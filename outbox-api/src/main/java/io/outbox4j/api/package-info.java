/**
 * The ports of outbox4j: the values that travel through an outbox ({@link io.outbox4j.api.Message},
 * {@link io.outbox4j.api.Delivery}), the write side an application calls inside its own transaction
 * ({@link io.outbox4j.api.Outbox}), the dispatch side a relay drives ({@link
 * io.outbox4j.api.OutboxStore}), the transport side ({@link io.outbox4j.api.Publisher}) and the
 * hooks around them ({@link io.outbox4j.api.Observer}, {@link io.outbox4j.api.Backoff}).
 *
 * <p>Nulls are decided once for the whole package, and checked by the compiler (JSpecify
 * {@code @NullMarked}, NullAway): no method accepts or returns {@code null} unless the parameter is
 * annotated {@code @Nullable}; values that may be absent are returned as {@link
 * java.util.Optional}. Value types are immutable and validated when they are built; a bad value is
 * rejected with an {@link java.lang.IllegalArgumentException} whose message names the field and
 * what was wrong with it.
 */
@NullMarked
package io.outbox4j.api;

import org.jspecify.annotations.NullMarked;
