package io.outbox4j.spring.boot;

import io.outbox4j.engine.Relay;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the relay with the application context: a new {@link Relay} on each start, closed on stop
 * (no new claim; the running batch finishes within {@code outbox4j.relay.shutdown-timeout} and its
 * outcomes are recorded). It starts before and stops after the web server (a lower phase), so
 * requests still being served during a graceful shutdown can enqueue and their messages are
 * published before the relay stops.
 */
final class RelayLifecycle implements SmartLifecycle {
    /** Below the web server's graceful-shutdown phase. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private final Supplier<Relay> factory;
    private final List<RelayListener> listeners;
    private volatile @Nullable Relay relay;
    private volatile boolean running;
    private volatile long startedAtMillis;

    RelayLifecycle(Supplier<Relay> factory) {
        this(factory, List.of());
    }

    RelayLifecycle(Supplier<Relay> factory, List<RelayListener> listeners) {
        this.factory = factory;
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        Relay r = factory.get();
        r.start();
        for (RelayListener l : listeners) {
            l.started(r);
        }
        relay = r;
        startedAtMillis = System.currentTimeMillis();
        running = true;
    }

    @Override
    public void stop() {
        Relay r;
        synchronized (this) {
            r = relay;
            relay = null;
            running = false;
        }
        if (r != null) {
            r.close();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** Asks the running relay to claim now; does nothing when it is not running. */
    void wakeUp() {
        Relay r = relay;
        if (r != null) {
            r.wakeUp();
        }
    }

    /** The running relay's publishing condition, or null when it is not running. */
    Relay.@Nullable Publishing publishing() {
        Relay r = relay;
        return r == null ? null : r.publishing();
    }

    /** When the running relay last claimed; empty when it has not yet, or is not running. */
    Optional<Instant> lastClaim() {
        Relay r = relay;
        return r == null ? Optional.empty() : r.lastClaim();
    }

    /** The running relay, or null when it is not running. */
    @Nullable Relay relay() {
        return relay;
    }

    /** When the relay last started, in epoch milliseconds (0 if never). */
    long startedAtMillis() {
        return startedAtMillis;
    }

    @Override
    public String toString() {
        return "RelayLifecycle[running=" + running + "]";
    }
}
