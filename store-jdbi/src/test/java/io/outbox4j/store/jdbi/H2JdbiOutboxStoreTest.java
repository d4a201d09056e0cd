package io.outbox4j.store.jdbi;

import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;

/** The store's own tests on H2. */
class H2JdbiOutboxStoreTest extends JdbiOutboxStoreTest {
    H2JdbiOutboxStoreTest() {
        super(() -> Databases.h2("store"), Dialect.H2);
    }
}
