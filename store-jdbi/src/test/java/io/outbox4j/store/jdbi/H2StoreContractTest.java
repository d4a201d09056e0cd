package io.outbox4j.store.jdbi;

/** The store TCK on H2 (in memory). */
class H2StoreContractTest extends JdbiStoreContractTest {
    H2StoreContractTest() {
        super(KitDatabase.h2("tck"));
    }
}
