package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import org.jdbi.v3.core.Jdbi;

/** The admin kit with the MySQL dialect, run against MariaDB (no MySQL server here). */
class MySqlDialectOnMariaDbAdminContractTest extends JdbiAdminContractTest {
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
        return "outbox_admin_tck_mysql";
    }
}
