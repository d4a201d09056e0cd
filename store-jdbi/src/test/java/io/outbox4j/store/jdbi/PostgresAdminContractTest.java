package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

class PostgresAdminContractTest extends JdbiAdminContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.postgres();
    }
}
