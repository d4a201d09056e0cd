package io.outbox4j.engine;

import io.outbox4j.api.Observation;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Tells the observer what became of each claimed delivery, in claim order, once its outcome was
 * recorded (or could not be). Only bounded metadata: never the payload, headers or receipt.
 */
final class Observe {
    private Observe() {}

    static void observe(SafeObserver observer, List<Tracked> tracked) {
        for (Tracked t : tracked) {
            observer.delivery(
                    Observation.of(
                            t.delivery,
                            t.duration,
                            Objects.requireNonNull(t.outcome, "outcome"),
                            Optional.ofNullable(t.error),
                            t.publisherThrewError));
        }
    }
}
