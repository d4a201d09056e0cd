package io.outbox4j.store.jdbi;

/** The admin kit on H2 (in memory). */
class H2AdminContractTest extends JdbiAdminContractTest {
    H2AdminContractTest() {
        super(KitDatabase.h2("admin_tck"));
    }
}
