package io.outbox4j.engine;

import io.outbox4j.api.Backoff;
import java.time.Clock;
import java.time.Duration;

/** A relay's validated configuration (see {@link Relay.Builder}). */
record Settings(
        String owner,
        int batchSize,
        int workers,
        Duration deliveryTimeout,
        int maxAttempts,
        Backoff backoff,
        Duration pollInterval,
        Clock clock,
        SafeObserver observer,
        Duration shutdownTimeout,
        Duration storeWriteTimeout,
        Duration lease) {}
