package io.outbox4j.engine;

import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls the user's observer and swallows what it throws, so an observer can never break delivery.
 */
final class SafeObserver {
    private static final Logger LOG = LoggerFactory.getLogger(SafeObserver.class);
    private final Observer delegate;

    SafeObserver(Observer delegate) {
        this.delegate = delegate;
    }

    void delivery(Observation observation) {
        try {
            delegate.onDelivery(observation);
        } catch (RuntimeException e) {
            LOG.debug("observer failed on a delivery; ignored", e);
        }
    }

    void storeError(Throwable error) {
        try {
            delegate.onStoreError(error);
        } catch (RuntimeException e) {
            LOG.debug("observer failed on a store error; ignored", e);
        }
    }
}
