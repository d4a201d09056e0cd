package io.outbox4j.store.jdbi;

import org.jdbi.v3.core.Jdbi;

/** Concurrent claimers on PostgreSQL. */
class PostgresConcurrentClaimTest extends ConcurrentClaimTest {
    @Override
    Jdbi newJdbi() {
        return Databases.postgres();
    }
}
