/**
 * The {@code outbox4j} command-line tool: {@link io.outbox4j.cli.OutboxCli} (statistics and dead
 * letters of an outbox, through the stores' {@link io.outbox4j.api.OutboxAdmin} port). Everything
 * else in this package is package-private; what the standalone relay shares with it is in {@code
 * io.outbox4j.cli.internal}.
 */
@NullMarked
package io.outbox4j.cli;

import org.jspecify.annotations.NullMarked;
