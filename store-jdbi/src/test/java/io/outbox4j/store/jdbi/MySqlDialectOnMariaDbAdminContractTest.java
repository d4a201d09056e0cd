package io.outbox4j.store.jdbi;

/** The admin kit with the MySQL dialect, run against MariaDB (no MySQL server here). */
class MySqlDialectOnMariaDbAdminContractTest extends JdbiAdminContractTest {
    MySqlDialectOnMariaDbAdminContractTest() {
        super(KitDatabase.MYSQL_ON_MARIADB);
    }
}
