package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

/** The store TCK on H2 (in memory). */
class H2StoreContractTest extends JdbiStoreContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.h2("tck");
    }
}
