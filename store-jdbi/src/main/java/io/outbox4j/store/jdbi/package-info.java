/**
 * The outbox store on relational databases through Jdbi 3 (PostgreSQL, MariaDB/MySQL, H2). The one
 * entry point is {@link io.outbox4j.store.jdbi.JdbiOutboxStore#builder(org.jdbi.v3.core.Jdbi)};
 * everything else in this package is package-private: one dialect object per database that owns its
 * SQL and its claim and completion strategy ({@code PostgresDialect}, {@code MariaDbDialect},
 * {@code MySqlDialect}, {@code H2Dialect} over {@code SqlDialect}), and the write, dispatch and
 * admin sides that run them ({@code Writer}, {@code Dispatcher}, {@code Admin}). The DDL of each
 * dialect ships as a plain SQL resource beside these classes; docs/per-key-order.md describes the
 * bucket locks, the predecessor probe and parking they implement.
 */
@NullMarked
package io.outbox4j.store.jdbi;

import org.jspecify.annotations.NullMarked;
