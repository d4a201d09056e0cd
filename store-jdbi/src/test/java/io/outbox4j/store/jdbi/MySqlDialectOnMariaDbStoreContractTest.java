package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import org.jdbi.v3.core.Jdbi;

/**
 * The store TCK with the MySQL dialect, run against MariaDB (no MySQL server here): it exercises
 * the statements MySQL needs that MariaDB does not (completion without {@code DELETE … RETURNING}).
 */
class MySqlDialectOnMariaDbStoreContractTest extends JdbiStoreContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.mariaDb();
    }

    @Override
    Dialect dialect() {
        return Dialect.MYSQL;
    }

    @Override
    String table() {
        return "outbox_tck_mysql";
    }
}
