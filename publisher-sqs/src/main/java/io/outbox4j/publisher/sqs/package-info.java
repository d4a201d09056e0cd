/**
 * Publishes outbox messages to Amazon SQS: the one public entry point is {@link
 * io.outbox4j.publisher.sqs.SqsPublisher#builder()}; everything else in this package is
 * package-private.
 */
@NullMarked
package io.outbox4j.publisher.sqs;

import org.jspecify.annotations.NullMarked;
