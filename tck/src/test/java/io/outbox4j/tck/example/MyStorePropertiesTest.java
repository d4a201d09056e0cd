package io.outbox4j.tck.example;

import io.outbox4j.tck.OutboxStoreContract;
import io.outbox4j.tck.OutboxStoreProperties;

// tag::properties-example[]
/** Random operation sequences against the model of the store contract, with the kit's factories. */
class MyStorePropertiesTest extends OutboxStoreProperties {
    @Override
    protected OutboxStoreContract contract() {
        return new MyStoreContractTest();
    }
}
// end::properties-example[]
