/**
 * The standalone relay: {@link io.outbox4j.relay.OutboxRelay} runs one outbox4j relay as a process,
 * configured by a properties file or environment variables, with health and metrics over HTTP and a
 * drain on SIGTERM. Everything else in this package is package-private.
 */
@NullMarked
package io.outbox4j.relay;

import org.jspecify.annotations.NullMarked;
