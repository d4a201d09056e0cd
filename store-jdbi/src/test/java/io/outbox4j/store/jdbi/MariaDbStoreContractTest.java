package io.outbox4j.store.jdbi;

/** The store TCK on MariaDB. */
class MariaDbStoreContractTest extends JdbiStoreContractTest {
    MariaDbStoreContractTest() {
        super(KitDatabase.MARIADB);
    }
}
