package io.outbox4j.api;

/**
 * A synchronous hook called by the relay on the dispatching thread. Keep it fast and never throw;
 * an exception from an observer is swallowed so it cannot break delivery.
 */
public interface Observer {
    /** An observer that ignores everything. */
    Observer NOOP = observation -> {};

    /**
     * Called once per delivery attempt, after its outcome was recorded (or could not be).
     *
     * @param observation what happened
     */
    void onDelivery(Observation observation);

    /**
     * Called when the store failed (a claim or an outcome write); the relay pauses and retries. The
     * default does nothing.
     *
     * @param error the store's failure
     */
    default void onStoreError(Throwable error) {}
}
