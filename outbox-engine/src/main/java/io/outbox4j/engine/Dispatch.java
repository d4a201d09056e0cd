package io.outbox4j.engine;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.api.StaleLeaseException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Schedules the publisher calls of one batch: lanes dealt to at most {@code workers} groups, each
 * group one call at a time (the heads of its open lanes), each call bounded by {@code
 * deliveryTimeout} and holding one of the relay's {@link CallSlots} (so all batches in flight
 * together make at most {@code workers} calls at once; a group without a slot waits for one);
 * renews the batch's leases while it waits; starts no call once the relay is closing or
 * interrupted, the publisher threw an Error, the lease can no longer be proven, or the batch has
 * run for {@link Settings#maxBatchDuration(int)}. Runs on the batch's thread; the publisher calls
 * run on the publish pool (the one thread hand-off per call), so each can be abandoned at its
 * deadline.
 */
final class Dispatch {
    private final Settings settings;
    private final Publisher publisher;
    private final BooleanSupplier closing;
    private final LeaseKeeper leases;
    private final Decide decide;
    private final RelayLog log;
    private final CompletionService<List<PublishOutcome>> calls;

    /** By identity: a future has no equality of its own. */
    private final IdentityHashMap<Future<List<PublishOutcome>>, Call> inFlight =
            new IdentityHashMap<>();

    /** Where finished calls arrive; {@link #abort()} drops {@link #ABORT} in it. */
    private final BlockingQueue<Future<List<PublishOutcome>>> finished =
            new LinkedBlockingQueue<>();

    private static final Future<List<PublishOutcome>> ABORT =
            CompletableFuture.completedFuture(List.of());

    /** Dropped in {@link #finished} when a call slot frees while groups wait for one. */
    private static final Future<List<PublishOutcome>> WAKE =
            CompletableFuture.completedFuture(List.of());

    private final CallSlots slots;

    // one instance: CallSlots keeps and removes it by identity, which a method reference would not
    @SuppressWarnings("UnnecessaryLambda")
    private final Runnable wake = () -> finished.offer(WAKE);

    /** Groups with a call to start that found no free slot, in the order they asked. */
    private final ArrayDeque<Lanes.Group> waiting = new ArrayDeque<>();

    private final Instant claimTime;
    private Instant lastStart;
    private Duration batchLimit = Duration.ZERO;
    private volatile boolean aborted;
    private boolean interrupted;

    /** Messages given back because their lease could not be proven. */
    private int unprovable;

    /** One publisher call: the heads of some lanes of one group. */
    private record Call(
            Lanes.Group group, List<Tracked> heads, long startNanos, long deadlineNanos) {
        Duration took() {
            return Duration.ofNanos(Math.max(0, System.nanoTime() - startNanos));
        }
    }

    Dispatch(
            Settings settings,
            Publisher publisher,
            ExecutorService publishPool,
            CallSlots slots,
            BooleanSupplier closing,
            LeaseKeeper leases,
            Decide decide,
            RelayLog log,
            Instant claimTime) {
        this.settings = settings;
        this.publisher = publisher;
        this.closing = closing;
        this.leases = leases;
        this.decide = decide;
        this.log = log;
        this.calls = new ExecutorCompletionService<>(publishPool, finished);
        this.slots = slots;
        this.claimTime = claimTime;
        this.lastStart = claimTime;
    }

    /** From another thread ({@link Relay#close()} past its timeout): stop waiting for calls. */
    void abort() {
        aborted = true;
        finished.offer(ABORT);
    }

    /**
     * From another thread ({@link Relay#close()}): look at the relay's state now instead of at the
     * next event, so groups waiting for a call slot are given back at once when it is closing.
     */
    void nudge() {
        finished.offer(WAKE);
    }

    /**
     * How many groups (concurrent calls) a batch is dealt to: at most {@code workers}, and no more
     * than one per {@code perCall} messages, since an adapter pipelines the messages of one call
     * (one flush, one round of confirms) and every call is a hand-off.
     */
    static int groups(int messages, int workers, int perCall) {
        return Math.max(1, Math.min(workers, (messages + perCall - 1) / perCall));
    }

    /** Whether the batch's thread was interrupted while publishing. */
    boolean interrupted() {
        return interrupted;
    }

    /** Publishes the batch; afterwards every delivery is decided. */
    void publishAll(List<Tracked> tracked) {
        batchLimit = settings.maxBatchDuration(tracked.size());
        lastStart = claimTime.plus(batchLimit);
        List<Lanes.Group> groups =
                Lanes.plan(
                        tracked,
                        groups(tracked.size(), settings.workers(), settings.minMessagesPerCall()));
        for (Lanes.Group group : groups) {
            if (!waiting.isEmpty() || !startNext(group)) {
                waiting.add(group);
            }
        }
        try {
            publishUntilDone(groups);
        } finally {
            slots.cancel(wake);
            waiting.clear();
        }
        if (unprovable > 0) {
            log.leaseUnprovable(leases.provenUntil(), unprovable);
        }
        // Safety net: nothing may leave the batch undecided (it would wait for its lease to end).
        RetryableFailureException notPublished = null;
        for (Tracked t : tracked) {
            if (!t.decided()) {
                if (notPublished == null) {
                    notPublished =
                            new RetryableFailureException(
                                    "not published in this batch; given back untried");
                }
                if (t.handed) {
                    t.release(settings.clock().instant(), notPublished);
                } else {
                    t.abandon(notPublished);
                }
            }
        }
    }

    private void publishUntilDone(List<Lanes.Group> groups) {
        while (!inFlight.isEmpty() || !waiting.isEmpty()) {
            long wait = nanosToWait();
            Future<List<PublishOutcome>> done = null;
            if (wait > 0) {
                try {
                    done = calls.poll(wait, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                    stopAll(groups, "interrupted before the publisher answered");
                    break;
                }
            }
            if (done == ABORT) {
                stopAll(groups, "the relay closed before the publisher answered");
                break;
            }
            renew();
            if (done != null && done != WAKE) {
                Call call = endCall(done);
                if (call != null) {
                    finish(call, done);
                    if (!startNext(call.group())) {
                        waiting.add(call.group());
                    }
                }
            }
            startWaiting();
            if (done != null) {
                continue;
            }
            long at = System.nanoTime();
            for (Map.Entry<Future<List<PublishOutcome>>, Call> e :
                    new ArrayList<>(inFlight.entrySet())) {
                Call call = e.getValue();
                if (call.deadlineNanos() - at <= 0) {
                    endCall(e.getKey());
                    if (e.getKey().isDone()) {
                        finish(call, e.getKey());
                    } else {
                        e.getKey().cancel(true);
                        decide.failedAll(
                                call.heads(),
                                new TimeoutException(
                                        "publish did not finish within "
                                                + Durations.format(settings.deliveryTimeout())),
                                call.took());
                        settings.publishing().ended(call, false, true);
                    }
                    if (!startNext(call.group())) {
                        waiting.add(call.group());
                    }
                }
            }
            startWaiting();
        }
    }

    /** Starts the calls of waiting groups while slots are free (oldest first). */
    private void startWaiting() {
        while (!waiting.isEmpty()) {
            if (!startNext(waiting.peekFirst())) {
                return;
            }
            waiting.pollFirst();
        }
    }

    /** Forgets a call that answered, timed out or was cancelled, and frees its slot. */
    private @Nullable Call endCall(Future<List<PublishOutcome>> future) {
        Call call = inFlight.remove(future);
        if (call != null) {
            slots.release();
        }
        return call;
    }

    /**
     * Until the nearest call deadline or renewal, at most {@link Settings#clockCheck()}, in nanos.
     */
    private long nanosToWait() {
        long now = System.nanoTime();
        long wait = Durations.nanos(settings.clockCheck());
        for (Call call : inFlight.values()) {
            wait = Math.min(wait, call.deadlineNanos() - now);
        }
        return Math.min(wait, Durations.nanos(leases.untilNextRenewal(settings.clock().instant())));
    }

    /** Renews the leases if due; a delivery found lost stops its lane. */
    private void renew() {
        List<Tracked> lost = leases.renewIfDue(settings.clock().instant());
        for (Tracked t : lost) {
            if (!t.handed && !t.decided()) {
                t.abandon(
                        new StaleLeaseException(
                                "lease lost before the message was handed to the publisher;"
                                        + " dropped from the batch"));
            }
        }
        for (Tracked t : lost) {
            Decide.abandonRest(
                    t.lane,
                    new RetryableFailureException(
                            "held back: the lease of an earlier message with the same key was"
                                    + " lost"));
        }
    }

    /**
     * Starts the group's next publisher call, or gives back its remaining deliveries if none may
     * start.
     *
     * @return {@code false} if the call may start but no slot is free (the group must wait; this
     *     batch is woken when one frees), else {@code true}
     */
    private boolean startNext(Lanes.Group group) {
        if (group.open().isEmpty()) {
            return true;
        }
        if (Thread.currentThread().isInterrupted()) {
            interrupted = true;
        }
        renew();
        List<Lanes.Lane> open = group.open();
        if (open.isEmpty()) {
            return true;
        }
        Instant now = settings.clock().instant();
        Stop stop = stopReason(now);
        if (stop == null && !slots.tryAcquire(wake)) {
            return false;
        }
        if (stop == null) {
            List<Tracked> heads = new ArrayList<>(open.size());
            List<Message> messages = new ArrayList<>(open.size());
            for (Lanes.Lane lane : open) {
                Tracked head = Objects.requireNonNull(lane.head(), "an open lane has a head");
                heads.add(head);
                messages.add(head.delivery.message());
            }
            List<Message> batch = List.copyOf(messages);
            long start = System.nanoTime();
            try {
                Future<List<PublishOutcome>> future =
                        calls.submit(() -> publisher.publish(batch, settings.publisherTimeout()));
                for (Tracked t : heads) {
                    t.handed = true;
                }
                Call call =
                        new Call(
                                group,
                                heads,
                                start,
                                start + Durations.nanos(settings.deliveryTimeout()));
                inFlight.put(future, call);
                settings.publishing().started(call);
                return true;
            } catch (RejectedExecutionException closed) {
                slots.release();
                stop = new Stop("the relay is closed", false);
            }
        }
        giveBack(group, stop);
        return true;
    }

    /**
     * Why no further call may start.
     *
     * @param reason for the observations of the messages given back
     * @param leaseUnprovable whether the lease can no longer be proven (counted for the log)
     */
    private record Stop(String reason, boolean leaseUnprovable) {}

    /** Why no further call may start, or null if one may. */
    private @Nullable Stop stopReason(Instant now) {
        if (interrupted) {
            return new Stop("the relay was interrupted", false);
        }
        if (decide.publisherError() != null) {
            return new Stop("the publisher threw an Error", false);
        }
        if (closing.getAsBoolean() || aborted) {
            return new Stop("the relay is closing", false);
        }
        if (!leases.provable(now)) {
            return new Stop(
                    "the lease could not be renewed (last confirmed until "
                            + leases.provenUntil()
                            + ")",
                    true);
        }
        if (now.isAfter(lastStart)) {
            return new Stop(
                    "the batch ran for its limit of " + Durations.format(batchLimit), false);
        }
        return null;
    }

    private void giveBack(Lanes.Group group, Stop stop) {
        RetryableFailureException why =
                new RetryableFailureException(
                        "not started: " + stop.reason() + "; given back untried");
        int count = 0;
        for (Lanes.Lane lane : group.lanes) {
            for (Tracked t : lane.takeRest()) {
                if (!t.decided() && !t.handed) {
                    t.abandon(why);
                    count++;
                }
            }
        }
        if (stop.leaseUnprovable()) {
            unprovable += count;
        }
    }

    /**
     * Interrupted or aborted: applies the calls that are done, cancels the others (their messages
     * were handed over: released, the attempt counts), gives back everything not started.
     */
    private void stopAll(List<Lanes.Group> groups, String reason) {
        Future<List<PublishOutcome>> done;
        while ((done = calls.poll()) != null) {
            Call call = endCall(done);
            if (call != null) {
                finish(call, done);
            }
        }
        RetryableFailureException why =
                new RetryableFailureException(reason + "; released for an immediate retry");
        for (Map.Entry<Future<List<PublishOutcome>>, Call> e : inFlight.entrySet()) {
            e.getKey().cancel(true);
            decide.cancelled(e.getValue().heads(), why, e.getValue().took());
            settings.publishing().ended(e.getValue(), false, false);
            slots.release();
        }
        inFlight.clear();
        waiting.clear();
        slots.cancel(wake);
        for (Lanes.Group group : groups) {
            giveBack(group, new Stop(reason, false));
        }
    }

    /** Applies the answer of a call that is done, and tells the relay's publishing condition. */
    private void finish(Call call, Future<List<PublishOutcome>> future) {
        apply(call, future);
        boolean published = false;
        for (Tracked t : call.heads()) {
            published |= t.disposition == Tracked.Disposition.COMPLETE;
        }
        settings.publishing().ended(call, published, !published);
    }

    private void apply(Call call, Future<List<PublishOutcome>> future) {
        List<PublishOutcome> outcomes;
        try {
            outcomes = future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                decide.threw(call.heads(), error, call.took());
            } else {
                decide.failedAll(
                        call.heads(), Objects.requireNonNullElse(e.getCause(), e), call.took());
            }
            return;
        } catch (InterruptedException e) {
            // Not expected for a finished future; treat it like an interrupt of the batch.
            interrupted = true;
            decide.failedAll(call.heads(), e, call.took());
            return;
        }
        if (outcomes == null || outcomes.size() != call.heads().size()) {
            decide.failedAll(
                    call.heads(),
                    new RetryableFailureException(
                            "publisher returned "
                                    + (outcomes == null ? "null" : outcomes.size() + " outcomes")
                                    + " for "
                                    + call.heads().size()
                                    + " messages"),
                    call.took());
            return;
        }
        decide.answered(call.heads(), outcomes, call.took());
    }
}
