package io.outbox4j.store.jdbi;

/** The admin kit on PostgreSQL. */
class PostgresAdminContractTest extends JdbiAdminContractTest {
    PostgresAdminContractTest() {
        super(KitDatabase.POSTGRES);
    }
}
