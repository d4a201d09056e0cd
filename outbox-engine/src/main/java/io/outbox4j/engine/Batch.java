package io.outbox4j.engine;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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

/**
 * One claim batch: claim, publish lane by lane with bounded concurrency, record the outcomes,
 * observe. Everything here runs on the calling thread except the publisher calls (on the publish
 * pool, so that each can be abandoned at its deadline) and the outcome writes (on the write pool,
 * see {@link StoreWrites}).
 */
final class Batch {
    private final Settings settings;
    private final OutboxStore store;
    private final Publisher publisher;
    private final BooleanSupplier closing;
    private final CompletionService<List<PublishOutcome>> calls;

    /**
     * Where finished calls arrive; {@link #abort()} drops {@link #ABORT} in it to wake the batch.
     */
    private final BlockingQueue<Future<List<PublishOutcome>>> finished =
            new LinkedBlockingQueue<>();

    private static final Future<List<PublishOutcome>> ABORT =
            CompletableFuture.completedFuture(List.of());
    private volatile boolean aborted;
    private final StoreWrites writes;
    private final Map<Future<List<PublishOutcome>>, Call> inFlight = new HashMap<>();

    /**
     * The latest instant (by the relay's clock) a publisher call may start and still end inside the
     * lease.
     */
    private Instant lastStart;

    private boolean interrupted;
    private Error publisherError;

    /** One publisher call: the heads of some lanes of one group. */
    private record Call(
            Lanes.Group group,
            List<Lanes.Lane> lanes,
            List<Tracked> heads,
            long startNanos,
            long deadlineNanos) {}

    Batch(
            Settings settings,
            OutboxStore store,
            Publisher publisher,
            ExecutorService publishPool,
            ExecutorService writePool,
            BooleanSupplier closing) {
        this.settings = settings;
        this.store = store;
        this.publisher = publisher;
        this.closing = closing;
        this.calls = new ExecutorCompletionService<>(publishPool, finished);
        this.writes = new StoreWrites(writePool, settings.storeWriteTimeout(), settings.observer());
    }

    /**
     * Called from another thread by {@link Relay#close()} when the shutdown timeout has passed: the
     * batch cancels its calls in flight, releases what was not published and records the outcomes.
     */
    void abort() {
        aborted = true;
        finished.offer(ABORT);
    }

    Relay.Result run() {
        Instant claimTime = settings.clock().instant();
        List<Delivery> deliveries;
        try {
            deliveries =
                    store.claim(
                            new ClaimRequest(
                                    settings.owner(),
                                    claimTime,
                                    settings.lease(),
                                    settings.batchSize()));
        } catch (RuntimeException e) {
            settings.observer().storeError(e);
            throw e;
        }
        if (deliveries == null || deliveries.isEmpty()) {
            return Relay.Result.EMPTY;
        }
        List<Tracked> tracked = new ArrayList<>(deliveries.size());
        for (Delivery d : deliveries) {
            tracked.add(new Tracked(d, tracked.size()));
        }
        lastStart = claimTime.plus(settings.lease()).minus(settings.deliveryTimeout());

        publishAll(tracked);

        // The outcome writes ignore an interrupt; it is restored once they are done.
        boolean restoreInterrupt = Thread.interrupted() || interrupted;
        try {
            Relay.Result result = record(tracked);
            observe(tracked);
            if (publisherError != null) {
                throw publisherError;
            }
            return result;
        } finally {
            if (restoreInterrupt) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---------------------------------------------------------------- publishing

    private void publishAll(List<Tracked> tracked) {
        List<Lanes.Group> groups = Lanes.plan(tracked, settings.workers());
        for (Lanes.Group group : groups) {
            startNext(group);
        }
        while (!inFlight.isEmpty()) {
            long now = System.nanoTime();
            long wait = Long.MAX_VALUE;
            for (Call call : inFlight.values()) {
                wait = Math.min(wait, call.deadlineNanos() - now);
            }
            Future<List<PublishOutcome>> done = null;
            if (wait > 0) {
                try {
                    done = calls.poll(wait, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                    abandon(groups, "interrupted before the publisher answered");
                    break;
                }
            }
            if (done == ABORT) {
                abandon(groups, "the relay closed before the publisher answered");
                break;
            }
            if (done != null) {
                Call call = inFlight.remove(done);
                if (call != null) {
                    finish(call, done);
                    startNext(call.group());
                }
                continue;
            }
            long at = System.nanoTime();
            for (Map.Entry<Future<List<PublishOutcome>>, Call> e :
                    new ArrayList<>(inFlight.entrySet())) {
                Call call = e.getValue();
                if (call.deadlineNanos() - at <= 0) {
                    inFlight.remove(e.getKey());
                    if (e.getKey().isDone()) {
                        finish(call, e.getKey());
                    } else {
                        e.getKey().cancel(true);
                        failAll(
                                call,
                                new TimeoutException(
                                        "publish did not finish within "
                                                + Durations.format(settings.deliveryTimeout())));
                    }
                    startNext(call.group());
                }
            }
        }
        // Safety net: nothing may leave the batch undecided (it would wait for its lease to
        // expire).
        Instant now = settings.clock().instant();
        for (Tracked t : tracked) {
            if (!t.decided()) {
                t.release(
                        now,
                        new OutboxException(
                                "not published in this batch; released for an immediate retry"));
            }
        }
    }

    /**
     * Starts the group's next publisher call, or releases its remaining deliveries if none may
     * start.
     */
    private void startNext(Lanes.Group group) {
        List<Lanes.Lane> open = group.open();
        if (open.isEmpty()) {
            return;
        }
        if (Thread.currentThread().isInterrupted()) {
            interrupted = true;
        }
        Instant now = settings.clock().instant();
        String stop = stopReason(now);
        if (stop == null) {
            List<Tracked> heads = new ArrayList<>(open.size());
            List<Message> messages = new ArrayList<>(open.size());
            for (Lanes.Lane lane : open) {
                heads.add(lane.head());
                messages.add(lane.head().delivery.message());
            }
            List<Message> batch = List.copyOf(messages);
            long start = System.nanoTime();
            try {
                Future<List<PublishOutcome>> future =
                        calls.submit(() -> publisher.publish(batch, settings.deliveryTimeout()));
                inFlight.put(
                        future,
                        new Call(
                                group,
                                open,
                                heads,
                                start,
                                start + Durations.nanos(settings.deliveryTimeout())));
                return;
            } catch (RejectedExecutionException closed) {
                stop = "not started: the relay is closed";
            }
        }
        releaseRest(group, now, new OutboxException(stop + "; released for an immediate retry"));
    }

    /** Why no further call may start, or null if one may. */
    private String stopReason(Instant now) {
        if (interrupted) {
            return "not started: the relay was interrupted";
        }
        if (publisherError != null) {
            return "not started: the publisher threw an Error";
        }
        if (closing.getAsBoolean() || aborted) {
            return "not started: the relay is closing";
        }
        if (now.isAfter(lastStart)) {
            return "not started: the batch's lease would end before the delivery timeout";
        }
        return null;
    }

    /**
     * Interrupted or aborted: records the calls that are done, cancels the others, releases
     * everything not published.
     */
    private void abandon(List<Lanes.Group> groups, String reason) {
        Future<List<PublishOutcome>> done;
        while ((done = calls.poll()) != null) {
            Call call = inFlight.remove(done);
            if (call != null) {
                finish(call, done);
            }
        }
        Instant now = settings.clock().instant();
        OutboxException why = new OutboxException(reason + "; released for an immediate retry");
        for (Map.Entry<Future<List<PublishOutcome>>, Call> e : inFlight.entrySet()) {
            e.getKey().cancel(true);
            for (Tracked head : e.getValue().heads()) {
                head.duration = tookSince(e.getValue());
                head.release(now, why);
            }
        }
        inFlight.clear();
        for (Lanes.Group group : groups) {
            releaseRest(
                    group,
                    now,
                    new OutboxException(
                            "not started: " + reason + "; released for an immediate retry"));
        }
    }

    private void releaseRest(Lanes.Group group, Instant at, Throwable why) {
        for (Lanes.Lane lane : group.lanes) {
            for (Tracked t : lane.takeRest()) {
                if (!t.decided()) {
                    t.release(at, why);
                }
            }
        }
    }

    /** Applies the answer of a call that is done. */
    private void finish(Call call, Future<List<PublishOutcome>> future) {
        List<PublishOutcome> outcomes;
        try {
            outcomes = future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                publisherThrew(call, error);
            } else {
                failAll(call, e.getCause());
            }
            return;
        } catch (InterruptedException e) {
            // Not expected for a finished future; treat it like an interrupt of the batch.
            interrupted = true;
            failAll(call, e);
            return;
        }
        if (outcomes == null || outcomes.size() != call.heads().size()) {
            failAll(
                    call,
                    new OutboxException(
                            "publisher returned "
                                    + (outcomes == null ? "null" : outcomes.size() + " outcomes")
                                    + " for "
                                    + call.heads().size()
                                    + " messages"));
            return;
        }
        Duration took = tookSince(call);
        for (int i = 0; i < outcomes.size(); i++) {
            Tracked t = call.heads().get(i);
            Lanes.Lane lane = call.lanes().get(i);
            PublishOutcome outcome = outcomes.get(i);
            lane.advance();
            if (outcome != null && outcome.isPublished()) {
                t.complete(took);
            } else {
                t.duration = took;
                fail(
                        t,
                        lane,
                        outcome != null
                                ? outcome
                                : PublishOutcome.failed(
                                        new OutboxException(
                                                "publisher returned no outcome for this message")));
            }
        }
    }

    private void failAll(Call call, Throwable cause) {
        Duration took = tookSince(call);
        PublishOutcome failed = PublishOutcome.failed(cause);
        for (int i = 0; i < call.heads().size(); i++) {
            Tracked t = call.heads().get(i);
            t.duration = took;
            call.lanes().get(i).advance();
            fail(t, call.lanes().get(i), failed);
        }
    }

    /** The verdict for one failed head; the rest of its lane is held back behind it. */
    private void fail(Tracked t, Lanes.Lane lane, PublishOutcome failure) {
        Instant now = settings.clock().instant();
        Throwable cause = failure.failure().orElseThrow();
        Verdicts.Verdict verdict =
                Verdicts.decide(
                        failure,
                        t.delivery.attempt(),
                        settings.maxAttempts(),
                        settings.backoff(),
                        now);
        if (verdict.deadLetter()) {
            t.deadLetter(verdict.reason(), cause);
            holdBack(lane, now);
        } else {
            t.release(verdict.retryAt(), cause);
            holdBack(lane, verdict.retryAt());
        }
    }

    /**
     * An Error: the call's deliveries are released (after the backoff), no further call starts, the
     * Error is rethrown later.
     */
    private void publisherThrew(Call call, Error error) {
        if (publisherError == null) {
            publisherError = error;
        } else if (publisherError != error) {
            publisherError.addSuppressed(error);
        }
        Duration took = tookSince(call);
        Instant now = settings.clock().instant();
        for (int i = 0; i < call.heads().size(); i++) {
            Tracked t = call.heads().get(i);
            Lanes.Lane lane = call.lanes().get(i);
            lane.advance();
            Instant at =
                    Verdicts.retryAt(
                            now,
                            Verdicts.spread(
                                    Verdicts.backoffDelay(
                                            settings.backoff(), t.delivery.attempt())));
            t.duration = took;
            t.publisherThrewError = true;
            t.release(at, error);
            holdBack(lane, at);
        }
    }

    private static void holdBack(Lanes.Lane lane, Instant until) {
        List<Tracked> rest = lane.takeRest();
        if (rest.isEmpty()) {
            return;
        }
        OutboxException why =
                new OutboxException(
                        "held back: an earlier message with the same key failed in this batch; released to stay behind it");
        for (Tracked t : rest) {
            t.release(until, why);
        }
    }

    private static Duration tookSince(Call call) {
        return Duration.ofNanos(Math.max(0, System.nanoTime() - call.startNanos()));
    }

    // ---------------------------------------------------------------- recording

    private Relay.Result record(List<Tracked> tracked) {
        String owner = settings.owner();
        List<Tracked> published = new ArrayList<>();
        for (Tracked t : tracked) {
            if (t.disposition == Tracked.Disposition.COMPLETE) {
                published.add(t);
            }
        }
        int completed = 0;
        int released = 0;
        int deadLettered = 0;
        if (!published.isEmpty()) {
            List<String> receipts = new ArrayList<>(published.size());
            for (Tracked t : published) {
                receipts.add(t.delivery.receipt());
            }
            Completion completion = new Completion(owner, receipts);
            Set<String> stale = writes.run(() -> store.complete(completion));
            for (Tracked t : published) {
                if (stale == null) {
                    t.outcome = Observation.Outcome.PUBLISHED;
                } else if (stale.contains(t.delivery.receipt())) {
                    t.outcome = Observation.Outcome.STALE;
                } else {
                    t.outcome = Observation.Outcome.COMPLETED;
                    completed++;
                }
            }
        }
        Instant now = settings.clock().instant();
        for (Tracked t : tracked) {
            String receipt = t.delivery.receipt();
            if (t.disposition == Tracked.Disposition.RELEASE) {
                Release release =
                        new Release(owner, receipt, t.availableAt, Verdicts.describe(t.error));
                Boolean ok = writes.run(() -> store.release(release));
                t.outcome =
                        Boolean.FALSE.equals(ok)
                                ? Observation.Outcome.STALE
                                : Observation.Outcome.RELEASED;
                released += Boolean.TRUE.equals(ok) ? 1 : 0;
            } else if (t.disposition == Tracked.Disposition.DEAD_LETTER) {
                DeadLetter deadLetter = new DeadLetter(owner, receipt, t.deadLetterReason, now);
                Boolean ok = writes.run(() -> store.deadLetter(deadLetter));
                if (ok == null) {
                    // Not recorded: the lease expires and the message comes back.
                    t.outcome = Observation.Outcome.RELEASED;
                } else {
                    t.outcome = ok ? Observation.Outcome.DEAD_LETTERED : Observation.Outcome.STALE;
                    deadLettered += ok ? 1 : 0;
                }
            }
        }
        return new Relay.Result(
                tracked.size(), published.size(), completed, released, deadLettered);
    }

    private void observe(List<Tracked> tracked) {
        for (Tracked t : tracked) {
            Message m = t.delivery.message();
            settings.observer()
                    .delivery(
                            new Observation(
                                    m.topic(),
                                    m.module(),
                                    t.delivery.attempt(),
                                    t.duration,
                                    t.outcome,
                                    Optional.ofNullable(t.error),
                                    t.publisherThrewError));
        }
    }
}
