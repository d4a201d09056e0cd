package io.outbox4j.store.jdbi;

import io.outbox4j.tck.OutboxStoreContract;
import io.outbox4j.tck.OutboxStoreProperties;

/**
 * Random operation sequences against the model of the store contract (outbox-tck's {@link
 * OutboxStoreProperties}) on Postgres, in a table of their own.
 */
class PostgresStorePropertiesTest extends OutboxStoreProperties {
    @Override
    protected OutboxStoreContract contract() {
        return new JdbiStoreContractTest(KitDatabase.POSTGRES, "outbox_pbt") {};
    }
}
