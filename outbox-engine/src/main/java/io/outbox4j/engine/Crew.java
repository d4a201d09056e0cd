package io.outbox4j.engine;

import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import java.util.concurrent.ExecutorService;

/**
 * What every batch of one relay works with: the checked settings, the store and the publisher, the
 * pools the publisher calls and the store writes run on, the relay-wide {@link CallSlots} and the
 * relay's log. Built once by the {@link Pipeline}; handed to each {@link Batch} and, from there, to
 * its {@link Dispatch} and {@link Recorder}.
 *
 * @param publishPool where the publisher calls run (one hand-off per call)
 * @param writePool where the bounded store writes run ({@link StoreWrites})
 */
record Crew(
        Settings settings,
        OutboxStore store,
        Publisher publisher,
        ExecutorService publishPool,
        ExecutorService writePool,
        CallSlots slots,
        RelayLog log) {}
