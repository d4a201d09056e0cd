package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;

/** The store's own tests on MariaDB. */
class MariaDbJdbiOutboxStoreTest extends JdbiOutboxStoreTest {
    MariaDbJdbiOutboxStoreTest() {
        super(Databases::mariaDb, Dialect.MARIADB);
    }
}
