/**
 * The MongoDB outbox store: {@link io.outbox4j.store.mongo.MongoOutboxStore}, built with {@link
 * io.outbox4j.store.mongo.MongoOutboxStore#builder()}, keeps messages in one collection, enqueues
 * them in the caller's {@code ClientSession} transaction, leases them to relays in per-key order
 * (parking and unparking under short per-bucket locks), and serves operators (statistics, dead
 * letters). Everything else in this package is implementation.
 *
 * <p>Nulls: no public method accepts or returns {@code null}; the compiler checks it (JSpecify
 * {@code @NullMarked}, NullAway).
 */
@NullMarked
package io.outbox4j.store.mongo;

import org.jspecify.annotations.NullMarked;
