package io.outbox4j.store.mongo;

import com.mongodb.MongoException;
import com.mongodb.MongoNamespace;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.StoreUnavailableException;

/**
 * Turns the driver's exceptions into the library's: a caller of the store catches {@link
 * OutboxException} and never has to know the MongoDB driver's types. The driver's exception stays
 * the cause and its message is repeated, so nothing of the diagnosis is lost.
 */
final class Failures {
    private Failures() {}

    /**
     * A store operation that failed in the driver or on the server (connection lost, timeout,
     * refused write, missing privileges).
     *
     * @param what the operation, as a user would name it ("claim", "complete")
     */
    static OutboxException of(String what, MongoNamespace namespace, MongoException e) {
        return new StoreUnavailableException(
                "MongoDB outbox " + namespace + ": " + what + " failed: " + e.getMessage(), e);
    }

    /** A store operation that could not run, with a message that says why. */
    static OutboxException of(String message) {
        return new StoreUnavailableException(message);
    }
}
