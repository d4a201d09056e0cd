/**
 * Spring Boot auto-configuration for outbox4j: {@link io.outbox4j.spring.boot.TransactionalOutbox}
 * to enqueue in the Spring-managed transaction, the store, publisher and relay beans, and the
 * {@code outbox4j.*} properties ({@link io.outbox4j.spring.boot.OutboxProperties}).
 */
@NullMarked
package io.outbox4j.spring.boot;

import org.jspecify.annotations.NullMarked;
