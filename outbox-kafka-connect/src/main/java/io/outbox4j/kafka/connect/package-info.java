/**
 * A Kafka Connect source connector over the outbox4j stores: {@link
 * io.outbox4j.kafka.connect.OutboxSourceConnector} (with its task {@link
 * io.outbox4j.kafka.connect.OutboxSourceTask} and its settings {@link
 * io.outbox4j.kafka.connect.OutboxSourceConnectorConfig}) claims messages from a store-jdbi outbox
 * table, emits one record per message, and completes a message only once Kafka acknowledged its
 * record. Those three classes are public because the Connect worker instantiates them; everything
 * else in this package is package-private.
 */
@NullMarked
package io.outbox4j.kafka.connect;

import org.jspecify.annotations.NullMarked;
