package io.outbox4j.spring.boot;

import io.outbox4j.engine.Relay;

/** Told about each relay the starter starts (a restart of the context builds a new one). */
@FunctionalInterface
interface RelayListener {
    /**
     * A relay was started.
     *
     * @param relay the running relay
     */
    void started(Relay relay);
}
