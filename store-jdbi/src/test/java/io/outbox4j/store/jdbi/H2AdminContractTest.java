package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

class H2AdminContractTest extends JdbiAdminContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.h2("admin_tck");
    }
}
