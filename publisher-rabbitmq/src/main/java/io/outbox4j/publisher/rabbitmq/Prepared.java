package io.outbox4j.publisher.rabbitmq;

import com.rabbitmq.client.AMQP;

/**
 * A message turned into what {@code basicPublish} takes, computed on the caller's thread before any
 * I/O.
 *
 * @param messageId the outbox message id (also the AMQP {@code message-id})
 * @param destination where it goes
 * @param properties the AMQP properties, headers included
 * @param body the payload
 */
@SuppressWarnings("ArrayRecordComponent") // never compared nor hashed: it only carries the body
record Prepared(
        String messageId,
        RabbitMqPublisher.Destination destination,
        AMQP.BasicProperties properties,
        byte[] body) {}
