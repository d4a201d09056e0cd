package io.outbox4j.engine;

import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One batch, job by job: {@link Claim claim}, {@link Dispatch schedule} the publisher calls while
 * the {@link LeaseKeeper} renews the leases, {@link Decide decide} each outcome, {@link Recorder
 * record} them, {@link Observe observe} them. Everything runs on the calling thread except the
 * publisher calls (publish pool) and the store writes (write pool, see {@link StoreWrites}).
 */
final class Batch {
    private final Settings settings;
    private final OutboxStore store;
    private final Publisher publisher;
    private final ExecutorService publishPool;
    private final ExecutorService writePool;
    private final BooleanSupplier closing;
    private final RelayLog log;
    private volatile @Nullable Dispatch dispatch;
    private volatile boolean aborted;

    Batch(
            Settings settings,
            OutboxStore store,
            Publisher publisher,
            ExecutorService publishPool,
            ExecutorService writePool,
            BooleanSupplier closing,
            RelayLog log) {
        this.settings = settings;
        this.store = store;
        this.publisher = publisher;
        this.publishPool = publishPool;
        this.writePool = writePool;
        this.closing = closing;
        this.log = log;
    }

    /**
     * Called from another thread by {@link Relay#close()} when the shutdown timeout has passed: the
     * batch cancels its calls in flight, gives back what was not published and records the
     * outcomes.
     */
    void abort() {
        aborted = true;
        Dispatch d = dispatch;
        if (d != null) {
            d.abort();
        }
    }

    Relay.Result run() {
        Instant claimTime = settings.clock().instant();
        List<Tracked> tracked = Claim.claim(settings, store, claimTime);
        if (tracked.isEmpty()) {
            return Relay.Result.EMPTY;
        }
        LeaseKeeper leases =
                new LeaseKeeper(
                        settings,
                        store,
                        new StoreWrites(
                                writePool,
                                min(settings.storeWriteTimeout(), settings.renewEvery()),
                                settings.observer(),
                                log),
                        claimTime,
                        tracked);
        Decide decide = new Decide(settings, log);
        Dispatch d =
                new Dispatch(
                        settings,
                        publisher,
                        publishPool,
                        () -> closing.getAsBoolean() || aborted,
                        leases,
                        decide,
                        log,
                        claimTime);
        dispatch = d;
        if (aborted) {
            d.abort();
        }
        d.publishAll(tracked);

        // The outcome writes ignore an interrupt; it is restored once they are done.
        boolean restoreInterrupt = Thread.interrupted() || d.interrupted();
        try {
            StoreWrites writes =
                    new StoreWrites(
                            writePool, settings.storeWriteTimeout(), settings.observer(), log);
            Relay.Result result =
                    new Recorder(settings, store, writes, leases, log).record(tracked);
            leases.logSummary();
            Observe.observe(settings.observer(), tracked);
            log.flushFailures(settings.clock().instant(), false);
            if (decide.publisherError() != null) {
                throw decide.publisherError();
            }
            return result;
        } finally {
            if (restoreInterrupt) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
