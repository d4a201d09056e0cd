package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import org.jdbi.v3.core.Jdbi;

/** The store's own tests on H2. */
class H2JdbiOutboxStoreTest extends JdbiOutboxStoreTest {
    @Override
    Jdbi newJdbi() {
        return Databases.h2("store");
    }

    @Override
    Dialect expectedDialect() {
        return Dialect.H2;
    }
}
