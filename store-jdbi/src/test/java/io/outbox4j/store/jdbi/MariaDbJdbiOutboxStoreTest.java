package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import org.jdbi.v3.core.Jdbi;

/** The store's own tests on MariaDB. */
class MariaDbJdbiOutboxStoreTest extends JdbiOutboxStoreTest {
    @Override
    Jdbi newJdbi() {
        return Databases.mariaDb();
    }

    @Override
    Dialect expectedDialect() {
        return Dialect.MARIADB;
    }
}
