package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Handle;

/**
 * A claim lock made of a row: the single row of the outbox's lock table, locked with {@code SELECT
 * … FOR UPDATE} until the transaction ends. For databases without transaction-scoped advisory locks
 * (MariaDB, MySQL, H2). The DDL inserts the row; a table created without it gets it on first use.
 */
final class LockRow {
    private final String lockTable;
    private final String select;
    private final String insert;

    /**
     * Prepares the statements.
     *
     * @param lockTable the quoted name of the lock table
     * @param insertIfAbsent the dialect's statement that inserts the row unless it exists, with
     *     {@code %s} for the lock table
     */
    LockRow(String lockTable, String insertIfAbsent) {
        this.lockTable = lockTable;
        this.select = "SELECT name FROM " + lockTable + " WHERE name = 'claim' FOR UPDATE";
        this.insert = String.format(insertIfAbsent, lockTable);
    }

    /** For error messages: the lock table's name in double quotes. */
    String describe() {
        return " or its lock table \"" + lockTable.substring(1, lockTable.length() - 1) + "\"";
    }

    void lock(Handle h) {
        if (h.createQuery(select).mapTo(String.class).findOne().isEmpty()) {
            h.execute(insert);
            h.createQuery(select).mapTo(String.class).one();
        }
    }
}
