/**
 * The end-to-end fixture of the fault tests: a PostgreSQL outbox ({@link
 * io.outbox4j.faulttests.OutboxDatabase}), keyed messages with a sequence number ({@link
 * io.outbox4j.faulttests.KeyedLoad}), relays in this JVM or in a child JVM ({@link
 * io.outbox4j.faulttests.FaultRelays}, {@link io.outbox4j.faulttests.ChildRelay}), a journal of the
 * leases each relay holds ({@link io.outbox4j.faulttests.LeaseJournal}), a counting consumer
 * ({@link io.outbox4j.faulttests.KafkaTally} feeding a {@link
 * io.outbox4j.faulttests.DeliveryLedger}) and the figures file ({@link
 * io.outbox4j.faulttests.FaultFigures}).
 *
 * <p>Everything except {@code KafkaTally}, {@code RelayTagInterceptor} and the Kafka part of {@code
 * FaultRelays} is broker-agnostic. Nothing here accepts or returns null unless it is marked
 * nullable.
 */
@NullMarked
package io.outbox4j.faulttests;

import org.jspecify.annotations.NullMarked;
