package io.outbox4j.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
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
    private final Crew crew;
    private final Settings settings;
    private final BooleanSupplier closing;
    private volatile @Nullable Dispatch dispatch;
    private volatile boolean aborted;
    private Instant claimTime = Instant.EPOCH;

    /** Whether the outcome writes run on the batch's own thread (a batch thread of the loop). */
    private boolean directWrites;

    private List<Tracked> tracked = List.of();

    /**
     * @param closing whether the relay is closing (or its loop ended): the batch then starts no
     *     further publisher call
     */
    Batch(Crew crew, BooleanSupplier closing) {
        this.crew = crew;
        this.settings = crew.settings();
        this.closing = closing;
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
        tracked = Claim.claim(settings, crew.store(), claimTime, limit);
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
        RelayLog log = crew.log();
        LeaseKeeper leases =
                new LeaseKeeper(
                        settings,
                        crew.store(),
                        new StoreWrites(
                                crew.writePool(),
                                min(settings.storeWriteTimeout(), settings.renewEvery()),
                                settings.observer(),
                                log),
                        claimTime,
                        tracked);
        Decide decide = new Decide(settings, log);
        Dispatch d =
                new Dispatch(
                        crew, () -> closing.getAsBoolean() || aborted, leases, decide, claimTime);
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
                                    crew.writePool(),
                                    settings.storeWriteTimeout(),
                                    settings.observer(),
                                    log);
            Relay.Result result = new Recorder(crew, writes, leases).record(tracked);
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
