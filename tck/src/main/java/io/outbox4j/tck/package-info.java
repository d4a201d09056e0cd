/**
 * The outbox4j test kit: JUnit 5 contracts a store ({@link io.outbox4j.tck.OutboxStoreContract},
 * {@link io.outbox4j.tck.OutboxAdminContract}) or a publisher ({@link
 * io.outbox4j.tck.PublisherContract}) extends to prove it honours the ports, the reference store
 * {@link io.outbox4j.tck.InMemoryOutboxStore}, and ArchUnit rules ({@link
 * io.outbox4j.tck.OutboxArchitecture}) for code bases that use outbox4j.
 *
 * <p>Nulls are decided once for the whole package, as in {@code io.outbox4j.api} (JSpecify
 * {@code @NullMarked}, checked by NullAway): no method accepts or returns {@code null} unless it is
 * annotated {@code @Nullable}.
 */
@NullMarked
package io.outbox4j.tck;

import org.jspecify.annotations.NullMarked;
