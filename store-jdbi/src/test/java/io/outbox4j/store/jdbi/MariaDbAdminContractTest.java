package io.outbox4j.store.jdbi;

/** The admin kit on MariaDB. */
class MariaDbAdminContractTest extends JdbiAdminContractTest {
    MariaDbAdminContractTest() {
        super(KitDatabase.MARIADB);
    }
}
