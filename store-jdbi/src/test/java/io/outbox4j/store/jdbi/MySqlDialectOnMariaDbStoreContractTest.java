package io.outbox4j.store.jdbi;

/**
 * The store TCK with the MySQL dialect, run against MariaDB (no MySQL server here): it exercises
 * the statements MySQL needs that MariaDB does not (completion without {@code DELETE … RETURNING}).
 */
class MySqlDialectOnMariaDbStoreContractTest extends JdbiStoreContractTest {
    MySqlDialectOnMariaDbStoreContractTest() {
        super(KitDatabase.MYSQL_ON_MARIADB);
    }
}
