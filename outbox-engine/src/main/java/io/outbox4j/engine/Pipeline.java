package io.outbox4j.engine;

import io.outbox4j.api.AdaptivePolling;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The machinery behind a {@link Relay}: the loop that claims, the batches in flight, their bounds,
 * and shutdown.
 *
 * <p><b>Pipelined.</b> The loop thread only claims. Each claimed batch is handed to a batch thread
 * (one hand-off per batch) that publishes, records and observes it, while the loop claims the next
 * one. At most {@link Settings#maxInFlight()} messages and {@link #MAX_BATCHES_IN_FLIGHT} batches
 * are in flight (claimed and not yet recorded), whatever the backlog; the loop waits for room
 * before it claims. The publisher calls of all batches share {@code workers} slots ({@link
 * CallSlots}). Per-key order across batches in flight is the store's: a keyed message is not
 * claimable while an earlier message of its key is leased, so a later claim never takes a message
 * whose predecessor a batch in flight holds.
 *
 * <p><b>Adaptive claims</b> ({@link ClaimSizer}): from {@code minBatchSize} up to {@code
 * batchSize}. After a full claim the loop claims again as soon as there is room; after a partial or
 * empty one it waits for a wake-up or the poll interval. Except: a partial claim made beside
 * batches in flight right after a full claim most likely met the keys those batches hold (the store
 * fences them and may park the rows behind them); the loop then waits until no batch is in flight
 * and claims again at once, alone, so that a backlog concentrated on few keys is not claimed (and
 * parked) over and over beside the relay's own batches.
 *
 * <p><b>Coalesced wake-ups.</b> {@link #wakeUp()} sets a flag (a volatile read when it is already
 * set) and signals the loop only while it sleeps. A wake-up claims at once if no claim started in
 * the last {@link Settings#wakeUpWindow()}, otherwise at the end of that window: one claim for all
 * the wake-ups that came meanwhile. When a batch completes keyed messages and another claim ran
 * while it was in flight, the loop is woken too (that claim could not take the next message of
 * those keys).
 */
final class Pipeline {
    /** The most batches in flight at once (each on a thread of its own). */
    static final int MAX_BATCHES_IN_FLIGHT = 4;

    /**
     * Marks the threads running a batch of a relay, so that close() from inside returns at once.
     */
    private static final ThreadLocal<@Nullable Pipeline> INSIDE = new ThreadLocal<>();

    private final Settings settings;
    private final OutboxStore store;
    private final Publisher publisher;
    private final ExecutorService publishPool;
    private final ExecutorService writePool;
    private final ExecutorService batchPool;
    private final CallSlots slots;
    private final RelayLog log;
    private final ClaimSizer sizer;

    private final ReentrantLock lock = new ReentrantLock();

    /** Signalled on a wake-up (while the loop waits for one), a batch's end, and close. */
    private final Condition changed = lock.newCondition();

    private volatile boolean wakeRequested;
    private volatile boolean closed;

    /** The first Error a publisher threw in a batch of the loop; it ends the loop. */
    private volatile @Nullable Error failure;

    // What Relay.state() reads:
    private volatile boolean loopStarted;
    private volatile boolean loopEnded;
    private volatile boolean closeFinished;
    private volatile int claimFailuresInARow;
    private volatile @Nullable Instant lastClaim;

    // Guarded by lock:
    private boolean loopWaitsForWakeUp;
    private boolean claiming;
    private int messagesInFlight;
    private final Set<Batch> running = new LinkedHashSet<>();
    private long claimsStarted;
    private long lastClaimNanos;
    private boolean lastClaimOverlapped;

    /** Only the loop thread: the next idle wait ({@link AdaptivePolling}). */
    private Duration idleWait;

    final AtomicLong publishedTotal = new AtomicLong();
    final AtomicLong deadLetteredTotal = new AtomicLong();

    /** For tests: the relay's checked settings. */
    Settings settings() {
        return settings;
    }

    Pipeline(Settings settings, OutboxStore store, Publisher publisher, RelayLog log) {
        this.settings = settings;
        this.store = store;
        this.publisher = publisher;
        this.log = log;
        String prefix = "outbox4j-relay-" + settings.owner();
        this.publishPool = DaemonThreads.cachedPool(prefix + "-publish");
        this.writePool = DaemonThreads.cachedPool(prefix + "-store");
        this.batchPool = DaemonThreads.cachedPool(prefix + "-batch");
        this.slots = new CallSlots(settings.workers());
        this.sizer = new ClaimSizer(settings.minBatchSize(), settings.batchSize());
        this.lastClaimNanos = System.nanoTime() - Durations.nanos(settings.wakeUpWindow());
        this.idleWait = settings.pollInterval();
    }

    boolean closed() {
        return closed;
    }

    private Batch newBatch() {
        return new Batch(
                settings,
                store,
                publisher,
                publishPool,
                writePool,
                slots,
                () -> closed || failure != null,
                log);
    }

    // ---------------------------------------------------------------------------------------------
    // runOnce
    // ---------------------------------------------------------------------------------------------

    /** One batch of up to {@code batchSize} on the caller's thread, beside the loop's batches. */
    Relay.Result runOnce() {
        Batch batch = newBatch();
        lock.lock();
        try {
            ensureOpen();
            running.add(batch);
        } finally {
            lock.unlock();
        }
        Pipeline outer = INSIDE.get();
        INSIDE.set(this);
        try {
            List<Tracked> claimed = batch.claim(settings.batchSize());
            lastClaim = settings.clock().instant();
            if (claimed.isEmpty()) {
                return Relay.Result.EMPTY;
            }
            addInFlight(claimed.size());
            Relay.Result result = batch.process();
            count(result);
            return result;
        } finally {
            if (outer == null) {
                INSIDE.remove();
            } else {
                INSIDE.set(outer);
            }
            ended(batch, 0);
        }
    }

    private void addInFlight(int messages) {
        lock.lock();
        try {
            messagesInFlight += messages;
        } finally {
            lock.unlock();
        }
    }

    private void count(Relay.Result result) {
        publishedTotal.addAndGet(result.published());
        deadLetteredTotal.addAndGet(result.deadLettered());
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(
                    "relay '" + settings.owner() + "' is closed; build a new Relay");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The loop
    // ---------------------------------------------------------------------------------------------

    /** The loop thread's body: claims until closed; rethrows a publisher's Error. */
    void loop() {
        try {
            claimLoop();
        } finally {
            loopEnded = true;
        }
    }

    /** Marks the loop started (before its thread runs), for {@link #state()}. */
    void loopStarting() {
        loopStarted = true;
    }

    private void claimLoop() {
        int storeErrors = 0;
        boolean previousFull = false;
        boolean alone = false;
        while (true) {
            int limit = awaitRoom(alone);
            if (limit == 0) {
                break;
            }
            boolean overlapped = lastClaimOverlapped;
            Batch batch = newBatch();
            List<Tracked> claimed;
            long claimNumber;
            try {
                claimed = batch.claim(limit);
            } catch (RuntimeException e) {
                claimed(null);
                // Already reported to the observer; retry after a pause.
                storeErrors++;
                claimFailuresInARow = storeErrors;
                Duration pause = errorPause(storeErrors);
                log.claimFailed(storeErrors, pause, e);
                if (!pause(pause)) {
                    break;
                }
                continue;
            } catch (Error e) {
                claimed(null);
                throw e;
            }
            storeErrors = 0;
            claimFailuresInARow = 0;
            lastClaim = settings.clock().instant();
            boolean full = claimed.size() >= limit;
            // A partial claim beside batches in flight, right after a full one, most likely met
            // the keys those batches hold (the store fences them, and may park their followers):
            // the backlog is not over. Claim again once they are done, without waiting for a
            // wake-up, and keep the claim size.
            boolean fenced = !full && overlapped && previousFull;
            if (!fenced) {
                sizer.claimed(limit, claimed.size());
            }
            idleWait = AdaptivePolling.next(idleWait, settings.pollInterval(), !claimed.isEmpty());
            claimNumber = claimed(claimed.isEmpty() ? null : batch);
            if (!claimed.isEmpty()) {
                batch.writeOnOwnThread();
                start(batch, claimNumber);
            }
            previousFull = full;
            alone = fenced;
            if (!full && !fenced && !awaitWork()) {
                break;
            }
        }
        Error error = failure;
        if (error != null) {
            RelayLog.LIFECYCLE.error(
                    "relay '{}' stops: the publisher threw {}", settings.owner(), error.toString());
            throw error;
        }
    }

    /**
     * Waits until a claim may start (room for at least half a claim, fewer than {@link
     * #MAX_BATCHES_IN_FLIGHT} batches; with {@code alone}, no batch in flight), then marks the
     * claim started.
     *
     * @return the claim's limit, or 0 if the loop must end
     */
    private int awaitRoom(boolean alone) {
        lock.lock();
        try {
            while (true) {
                if (closed || failure != null) {
                    return 0;
                }
                int target = sizer.target();
                int room = settings.maxInFlight() - messagesInFlight;
                int need = Math.max(1, Math.min(target, settings.maxInFlight()) / 2);
                int batches = alone ? 1 : MAX_BATCHES_IN_FLIGHT;
                if (running.size() < batches && room >= need) {
                    lastClaimOverlapped = !running.isEmpty();
                    claiming = true;
                    wakeRequested = false;
                    claimsStarted++;
                    lastClaimNanos = System.nanoTime();
                    return Math.min(target, room);
                }
                changed.await();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The claim ended: registers its batch (if it claimed anything) as in flight.
     *
     * @return the number of this claim
     */
    private long claimed(@Nullable Batch batch) {
        lock.lock();
        try {
            claiming = false;
            if (batch != null) {
                running.add(batch);
                messagesInFlight += batch.size();
            }
            changed.signalAll();
            return claimsStarted;
        } finally {
            lock.unlock();
        }
    }

    /** Hands a claimed batch to a batch thread (or runs it here if the pools are shut down). */
    private void start(Batch batch, long claimNumber) {
        Runnable task = () -> runClaimed(batch, claimNumber);
        try {
            batchPool.execute(task);
        } catch (RejectedExecutionException shutDown) {
            task.run();
        }
    }

    private void runClaimed(Batch batch, long claimNumber) {
        INSIDE.set(this);
        try {
            count(batch.process());
        } catch (Error e) {
            lock.lock();
            try {
                if (failure == null) {
                    failure = e;
                }
            } finally {
                lock.unlock();
            }
        } catch (RuntimeException e) {
            // Not expected: the batch reports and swallows store failures itself.
            RelayLog.STORE.warn(
                    "relay '{}': a batch failed unexpectedly: {}",
                    settings.owner(),
                    RelayLog.describe(e));
        } finally {
            INSIDE.remove();
            ended(batch, claimNumber);
        }
    }

    /** A batch is done: frees its room, and wakes the loop if it may have unblocked keys. */
    private void ended(Batch batch, long claimNumber) {
        boolean unblocked = claimNumber > 0 && batch.completedKeyedMessages();
        lock.lock();
        try {
            if (running.remove(batch)) {
                messagesInFlight -= batch.size();
            }
            if (unblocked && claimsStarted > claimNumber) {
                wakeRequested = true;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * After a partial claim: waits for a wake-up (coalesced: not before the window since the last
     * claim has passed) or the idle wait (adaptive polling: short while claims find messages,
     * doubling up to the poll interval while they find none).
     *
     * @return {@code false} if the loop must end
     */
    private boolean awaitWork() {
        lock.lock();
        try {
            long pollAt = System.nanoTime() + Durations.nanos(idleWait);
            long window = Durations.nanos(settings.wakeUpWindow());
            while (true) {
                if (closed || failure != null) {
                    return false;
                }
                long now = System.nanoTime();
                if (wakeRequested) {
                    long at = lastClaimNanos + window;
                    if (now - at >= 0) {
                        return true;
                    }
                    changed.awaitNanos(at - now);
                    continue;
                }
                if (now - pollAt >= 0) {
                    return true;
                }
                loopWaitsForWakeUp = true;
                try {
                    changed.awaitNanos(pollAt - now);
                } finally {
                    loopWaitsForWakeUp = false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Waits {@code duration} (not woken by wake-ups). */
    private boolean pause(Duration duration) {
        lock.lock();
        try {
            long nanos = Durations.nanos(duration);
            while (!closed && nanos > 0) {
                nanos = changed.awaitNanos(nanos);
            }
            return !closed;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    private Duration errorPause(int errorsInARow) {
        Duration cap =
                settings.pollInterval().compareTo(Settings.MAX_ERROR_PAUSE) > 0
                        ? settings.pollInterval()
                        : Settings.MAX_ERROR_PAUSE;
        Duration pause = settings.pollInterval();
        for (int i = 1; i < errorsInARow && pause.compareTo(cap) < 0; i++) {
            pause = pause.multipliedBy(2);
        }
        return pause.compareTo(cap) > 0 ? cap : pause;
    }

    /** See {@link Relay#wakeUp()}: a volatile read when a wake-up is already pending. */
    void wakeUp() {
        if (wakeRequested || closed) {
            return;
        }
        lock.lock();
        try {
            wakeRequested = true;
            if (loopWaitsForWakeUp) {
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // close
    // ---------------------------------------------------------------------------------------------

    /** The relay's state now; see {@link Relay.State}. */
    Relay.State state() {
        if (closeFinished) {
            return Relay.State.STOPPED;
        }
        if (closed) {
            // close() from inside a batch returns at once: stopped once the batches are done
            return (loopEnded || !loopStarted) && busy().isEmpty()
                    ? Relay.State.STOPPED
                    : Relay.State.STOPPING;
        }
        if (loopEnded) {
            return Relay.State.STOPPED;
        }
        if (!loopStarted) {
            return Relay.State.NOT_STARTED;
        }
        return claimFailuresInARow > 0 ? Relay.State.FAILING : Relay.State.RUNNING;
    }

    /** When the last claim (of the loop or of runOnce) answered, or null before the first. */
    @Nullable Instant lastClaim() {
        return lastClaim;
    }

    /**
     * Stops claiming, waits for the batches in flight (and a claim under way) up to the shutdown
     * timeout, then aborts them and waits for their outcome writes; shuts the pools down.
     *
     * @return {@code false} if this call came from inside one of the relay's batches (it only
     *     marked the relay closed), or if the relay was already closed
     */
    boolean close() {
        List<Batch> nudge;
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            closed = true;
            changed.signalAll();
            nudge = new ArrayList<>(running);
        } finally {
            lock.unlock();
        }
        nudge.forEach(Batch::nudge);
        if (INSIDE.get() == this) {
            // From inside a batch (an observer, a publisher): the batches see `closed` and wind
            // down; the idle pools let their threads expire on their own.
            return false;
        }
        boolean interrupted = false;
        long deadline = System.nanoTime() + Durations.nanos(settings.shutdownTimeout());
        try {
            interrupted |= awaitIdle(deadline);
            List<Batch> late = busy();
            if (!late.isEmpty()) {
                late.forEach(Batch::abort);
                long more =
                        Durations.nanos(settings.storeWriteTimeout()) + TimeUnit.SECONDS.toNanos(1);
                interrupted |= awaitIdle(System.nanoTime() + more);
                if (!busy().isEmpty()) {
                    RelayLog.STORE.warn(
                            "relay '{}' closed while a batch was still recording its outcomes",
                            settings.owner());
                }
            }
        } finally {
            publishPool.shutdownNow();
            writePool.shutdown();
            batchPool.shutdown();
            closeFinished = true;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return true;
    }

    private List<Batch> busy() {
        lock.lock();
        try {
            return new ArrayList<>(running);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until no batch is in flight and no claim under way, or the deadline.
     *
     * @return whether the caller was interrupted meanwhile (the wait goes on regardless)
     */
    private boolean awaitIdle(long deadline) {
        boolean interrupted = false;
        lock.lock();
        try {
            while (claiming || !running.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    changed.awaitNanos(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            lock.unlock();
        }
        return interrupted;
    }

    // ---------------------------------------------------------------------------------------------
    // For tests
    // ---------------------------------------------------------------------------------------------

    /** Messages claimed and not yet recorded. */
    int messagesInFlight() {
        lock.lock();
        try {
            return messagesInFlight;
        } finally {
            lock.unlock();
        }
    }

    /** The loop's next claim size. */
    int claimTarget() {
        return sizer.target();
    }
}
