/**
 * Publishes outbox messages to RabbitMQ with publisher confirms, mandatory routing and a deadline
 * on every call. The one entry point is {@link
 * io.outbox4j.publisher.rabbitmq.RabbitMqPublisher#builder()}; every other type of the package is
 * an implementation detail.
 */
@NullMarked
package io.outbox4j.publisher.rabbitmq;

import org.jspecify.annotations.NullMarked;
