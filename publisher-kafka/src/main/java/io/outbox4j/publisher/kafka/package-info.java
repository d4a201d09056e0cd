/**
 * Kafka transport for outbox4j: {@link io.outbox4j.publisher.kafka.KafkaPublisher} publishes outbox
 * messages with an idempotent, {@code acks=all} producer and reports one outcome per message.
 * Everything else in this package is implementation.
 */
@NullMarked
package io.outbox4j.publisher.kafka;

import org.jspecify.annotations.NullMarked;
