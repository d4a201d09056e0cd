/**
 * The outbox4j console: {@link io.outbox4j.console.OutboxConsole} renders HTML pages over an
 * outbox's {@link io.outbox4j.api.OutboxAdmin} port (backlog, blocked keys, relays and members,
 * dead letters with replay and discard behind a confirmation) and answers transport-neutral
 * requests, so that the standalone relay and the Spring Boot starter serve it from their own HTTP
 * servers. Everything else in this package is package-private (docs/console.md).
 */
@NullMarked
package io.outbox4j.console;

import org.jspecify.annotations.NullMarked;
