package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

/** The store TCK on MariaDB. */
class MariaDbStoreContractTest extends JdbiStoreContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.mariaDb();
    }
}
