/**
 * The outbox store on relational databases through Jdbi 3 (PostgreSQL, MariaDB/MySQL, H2). The one
 * entry point is {@link io.outbox4j.store.jdbi.JdbiOutboxStore#builder(org.jdbi.v3.core.Jdbi)};
 * everything else in this package is package-private. The DDL of each dialect ships as a plain SQL
 * resource beside these classes.
 */
package io.outbox4j.store.jdbi;
