/**
 * outbox4j as the engine behind Spring Modulith's event externalization: {@code @Externalized}
 * events enqueued in the publishing transaction ({@link
 * io.outbox4j.spring.boot.modulith.OutboxModulithAutoConfiguration}).
 */
@NullMarked
package io.outbox4j.spring.boot.modulith;

import org.jspecify.annotations.NullMarked;
