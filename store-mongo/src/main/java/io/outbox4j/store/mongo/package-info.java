/**
 * The MongoDB outbox store: {@link io.outbox4j.store.mongo.MongoOutboxStore}, built with {@link
 * io.outbox4j.store.mongo.MongoOutboxStore#builder()}, keeps messages in one collection, enqueues
 * them in the caller's {@code ClientSession} transaction and leases them to relays with
 * per-document conditional updates. Everything else in this package is implementation.
 *
 * <p>Nulls: no public method accepts or returns {@code null}.
 */
package io.outbox4j.store.mongo;
