package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

/** Concurrent claimers on MariaDB. */
class MariaDbConcurrentClaimTest extends ConcurrentClaimTest {
    @Override
    Jdbi newJdbi() {
        return Databases.mariaDb();
    }
}
