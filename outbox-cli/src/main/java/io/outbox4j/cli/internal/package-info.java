/**
 * What the outbox4j commands share: settings from a file, the environment and the command line
 * ({@link io.outbox4j.cli.internal.Settings}), and opening a store from its URL ({@link
 * io.outbox4j.cli.internal.StoreConnection}). The standalone relay ({@code outbox-relay}) reads its
 * store the same way. Not a stable API: it changes with the commands.
 */
@NullMarked
package io.outbox4j.cli.internal;

import org.jspecify.annotations.NullMarked;
