package io.outbox4j.store.jdbi;

/** The store TCK on PostgreSQL. */
class PostgresStoreContractTest extends JdbiStoreContractTest {
    PostgresStoreContractTest() {
        super(KitDatabase.POSTGRES);
    }
}
