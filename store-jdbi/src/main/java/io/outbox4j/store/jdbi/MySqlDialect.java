package io.outbox4j.store.jdbi;

/**
 * MySQL 8: MariaDB's schema, claim and removals (MySQL has no {@code DELETE … RETURNING}, which
 * MariaDB no longer uses either: see {@link MariaDbDialect}). A dialect of its own so that MySQL's
 * differences have a place to go.
 */
final class MySqlDialect extends MariaDbDialect {
    MySqlDialect(String tableName, boolean deadLettersBlock) {
        super(tableName, deadLettersBlock);
    }
}
