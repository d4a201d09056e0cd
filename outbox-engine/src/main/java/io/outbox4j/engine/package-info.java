/**
 * The dispatch engine of outbox4j: {@link io.outbox4j.engine.Relay} claims leased messages from an
 * {@link io.outbox4j.api.OutboxStore}, hands them to a {@link io.outbox4j.api.Publisher} with
 * bounded concurrency and per-key order, and records each outcome (complete, release or dead
 * letter) in the store.
 *
 * <p>{@code Relay} (with its {@code Builder} and {@code Result}) is the whole public API of this
 * package; every other class is package-private. Nulls are decided once and checked by the compiler
 * (JSpecify {@code @NullMarked}, NullAway): no method accepts or returns {@code null} unless it is
 * annotated {@code @Nullable}.
 */
@NullMarked
package io.outbox4j.engine;

import org.jspecify.annotations.NullMarked;
