package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

class MariaDbAdminContractTest extends JdbiAdminContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.mariaDb();
    }
}
