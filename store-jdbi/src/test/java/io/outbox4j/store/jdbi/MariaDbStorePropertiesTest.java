package io.outbox4j.store.jdbi;

import io.outbox4j.tck.OutboxStoreContract;
import io.outbox4j.tck.OutboxStoreProperties;

/**
 * Random operation sequences against the model of the store contract (outbox-tck's {@link
 * OutboxStoreProperties}) on MariaDb, in a table of their own.
 */
class MariaDbStorePropertiesTest extends OutboxStoreProperties {
    @Override
    protected OutboxStoreContract contract() {
        return new JdbiStoreContractTest(KitDatabase.MARIADB, "outbox_pbt") {};
    }
}
