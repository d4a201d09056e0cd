package io.outbox4j.examples.quickstart.readme.web;

import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;

/** Breaks the composition-root rule: a web controller that builds a relay of its own. */
public final class RelayInAController {
    private RelayInAController() {}

    public static void flush(OutboxStore store, Publisher publisher) {
        try (Relay relay = Relay.builder(store, publisher).build()) {
            relay.runOnce();
        }
    }
}
