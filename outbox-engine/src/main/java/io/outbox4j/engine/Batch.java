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
 * record} them, {@link Observe observe} them. The claim runs on the thread that calls {@link
 * #claim}; {@link #process()} on the thread that calls it (the relay loop hands it to a batch
 * thread, {@link Relay#runOnce()} runs both on the caller's thread); the publisher calls run on the
 * publish pool and the store writes on the write pool (see {@link StoreWrites}).
 */
final class Batch {
    private final Settings settings;
    private final OutboxStore store;
    private final Publisher publisher;
    private final ExecutorService publishPool;
    private final ExecutorService writePool;
    private final CallSlots slots;
    private final BooleanSupplier closing;
    private final RelayLog log;
    private volatile @Nullable Dispatch dispatch;
    private volatile boolean aborted;
    private Instant claimTime = Instant.EPOCH;

    /** Whether the outcome writes run on the batch's own thread (a batch thread of the loop). */
    private boolean directWrites;

    private List<Tracked> tracked = List.of();

    Batch(
            Settings settings,
            OutboxStore store,
            Publisher publisher,
            ExecutorService publishPool,
            ExecutorService writePool,
            CallSlots slots,
            BooleanSupplier closing,
            RelayLog log) {
        this.settings = settings;
        this.store = store;
        this.publisher = publisher;
        this.publishPool = publishPool;
        this.writePool = writePool;
        this.slots = slots;
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

    /** Called from another thread by {@link Relay#close()}: see the closing state now. */
    void nudge() {
        Dispatch d = dispatch;
        if (d != null) {
            d.nudge();
        }
    }

    /**
     * Claims up to {@code limit} messages (a store failure is reported to the observer and thrown).
     *
     * @return the claimed deliveries, possibly none
     */
    List<Tracked> claim(int limit) {
        Claim.join(settings); // first: the claim time is then read in the store's frame
        claimTime = settings.clock().instant();
        tracked = Claim.claim(settings, store, claimTime, limit);
        return tracked;
    }

    /**
     * Lets {@link #process()} write the outcomes on its own thread instead of handing each write to
     * the write pool: for the loop's batch threads, which nobody interrupts. (A {@link
     * Relay#runOnce()} caller keeps the bounded, interrupt-deaf writes of the pool.)
     */
    void writeOnOwnThread() {
        directWrites = true;
    }

    /** How many messages the batch claimed. */
    int size() {
        return tracked.size();
    }

    /**
     * Whether a keyed message of this batch was completed: the store may now hand out the next
     * message of its key, which a claim made while this batch was in flight could not have taken.
     */
    boolean completedKeyedMessages() {
        for (Tracked t : tracked) {
            if (t.disposition == Tracked.Disposition.COMPLETE
                    && t.delivery.message().key().isPresent()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Publishes the claimed messages, records and observes the outcomes.
     *
     * @throws Error the error a publisher threw, after the outcomes were recorded
     */
    Relay.Result process() {
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
                        slots,
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
                    directWrites
                            ? StoreWrites.direct(settings.observer(), log)
                            : new StoreWrites(
                                    writePool,
                                    settings.storeWriteTimeout(),
                                    settings.observer(),
                                    log);
            Relay.Result result =
                    new Recorder(settings, store, writes, leases, log).record(tracked);
            leases.logSummary();
            Observe.observe(settings.observer(), tracked);
            log.flushFailures(settings.clock().instant(), false);
            Error error = decide.publisherError();
            if (error != null) {
                throw error;
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
