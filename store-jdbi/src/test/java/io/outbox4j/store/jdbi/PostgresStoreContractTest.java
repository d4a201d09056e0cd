package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

/** The store TCK on PostgreSQL. */
class PostgresStoreContractTest extends JdbiStoreContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.postgres();
    }
}
