package io.outbox4j.store.mongo;

import io.outbox4j.tck.OutboxStoreContract;
import io.outbox4j.tck.OutboxStoreProperties;

/**
 * Random operation sequences against the model of the store contract (outbox-tck's {@link
 * OutboxStoreProperties}) on the test MongoDB server, with the contract kit's factories. On
 * mongo-java-server (no multi-document transactions) the rolled-back enqueues of a sequence are
 * skipped, as the kit's transaction rules are; everything else runs.
 */
class MongoStorePropertiesTest extends OutboxStoreProperties {
    private static boolean created;

    @Override
    protected OutboxStoreContract contract() {
        synchronized (MongoStorePropertiesTest.class) {
            if (!created) {
                MongoOutboxStoreContractTest.createStores(); // its @BeforeAll
                created = true;
            }
        }
        return new MongoOutboxStoreContractTest();
    }
}
