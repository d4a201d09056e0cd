package io.outbox4j.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.tck.InMemoryOutboxStore;
import org.junit.jupiter.api.Test;

class SmokeTest {
    @Test
    void runOnce_publishesAndCompletesEverything() {
        MutableClock clock = new MutableClock();
        InMemoryOutboxStore store = new InMemoryOutboxStore(clock);
        store.enqueueCommitted(Fixtures.messages("m", 10));
        Fixtures.ScriptedPublisher publisher = Fixtures.ScriptedPublisher.accepting();
        try (Relay relay = Relay.builder(store, publisher).clock(clock).build()) {
            Relay.Result r = relay.runOnce();
            assertThat(r).isEqualTo(new Relay.Result(10, 10, 10, 0, 0));
            assertThat(store.size()).isZero();
        }
    }
}
