package io.outbox4j.engine;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.util.List;

/**
 * What most relay tests run on: a clock the test moves, the reference store on it, that store
 * wrapped to record every write, and an observer that records every delivery.
 */
abstract class RelayRig {
    final MutableClock clock = new MutableClock();
    final InMemoryOutboxStore memory = new InMemoryOutboxStore(clock);
    final RecordingStore store = new RecordingStore(memory);
    final Fixtures.RecordingObserver observer = new Fixtures.RecordingObserver();

    /** A relay builder over {@code on}, on the rig's clock, reporting to the rig's observer. */
    Relay.Builder relayOn(OutboxStore on, Publisher publisher) {
        return Relay.builder(on, publisher).clock(clock).observer(observer);
    }

    /**
     * Enqueues the messages, in this order, in one committed transaction of the reference store.
     */
    void enqueue(Message... messages) {
        memory.enqueueCommitted(List.of(messages));
    }
}
