package io.outbox4j.api;

/**
 * A synchronous hook called by the relay on the dispatching thread. Keep it fast and never throw;
 * an exception from an observer is swallowed so it cannot break delivery.
 */
public interface Observer {
    /** An observer that ignores everything. */
    Observer NOOP = observation -> {};

    /**
     * Called once for every claimed message of a batch, after its outcome was recorded (or could
     * not be): published, released, dead-lettered, abandoned untried, or stale. The observation
     * names the message (id, key, topic, enqueue time) but never carries its payload, headers or
     * receipt.
     *
     * @param observation what happened
     */
    void onDelivery(Observation observation);

    /**
     * Called when the store failed (a claim, a lease renewal or an outcome write); the relay pauses
     * and retries, or leaves the leases to expire. The default does nothing.
     *
     * @param error the store's failure
     */
    default void onStoreError(Throwable error) {}
}
