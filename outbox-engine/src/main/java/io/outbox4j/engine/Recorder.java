package io.outbox4j.engine;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Records a decided batch in the store: the published messages completed in one call, each failed
 * one released or dead-lettered, the untried ones given back in one {@link OutboxStore#abandon}
 * call. Sets each delivery's {@link Outcome}; keeps the leases renewed between writes. Runs on the
 * batch's thread; the writes themselves go through {@link StoreWrites}.
 */
final class Recorder {
    private final Settings settings;
    private final OutboxStore store;
    private final StoreWrites writes;
    private final LeaseKeeper leases;
    private final RelayLog log;

    Recorder(
            Settings settings,
            OutboxStore store,
            StoreWrites writes,
            LeaseKeeper leases,
            RelayLog log) {
        this.settings = settings;
        this.store = store;
        this.writes = writes;
        this.leases = leases;
        this.log = log;
    }

    Relay.Result record(List<Tracked> tracked) {
        String owner = settings.owner();
        List<Tracked> published = of(tracked, Tracked.Disposition.COMPLETE);
        List<Tracked> untried = of(tracked, Tracked.Disposition.ABANDON);
        int released = 0;
        int deadLettered = 0;
        int completed =
                recordAtOnce(
                        published,
                        receipts -> new Completion(owner, receipts),
                        "complete published messages",
                        store::complete,
                        Outcome.COMPLETED,
                        Outcome.PUBLISHED_NOT_RECORDED);
        for (Tracked t : tracked) {
            if (t.disposition == Tracked.Disposition.RELEASE) {
                renew();
                Release release =
                        new Release(
                                owner,
                                t.receipt(),
                                Objects.requireNonNull(t.availableAt, "availableAt"),
                                Verdicts.describe(Objects.requireNonNull(t.error, "error")));
                Boolean ok = writes.run("release a failed message", () -> store.release(release));
                leases.forget(t);
                t.outcome = outcome(ok, Outcome.RELEASED);
                released += Boolean.TRUE.equals(ok) ? 1 : 0;
            } else if (t.disposition == Tracked.Disposition.DEAD_LETTER) {
                renew();
                Instant now = settings.clock().instant();
                String reason = Objects.requireNonNull(t.deadLetterReason, "deadLetterReason");
                DeadLetter deadLetter = new DeadLetter(owner, t.receipt(), reason, now);
                Boolean ok =
                        writes.run("dead-letter a message", () -> store.deadLetter(deadLetter));
                leases.forget(t);
                t.outcome = outcome(ok, Outcome.DEAD_LETTERED);
                if (Boolean.TRUE.equals(ok)) {
                    deadLettered++;
                    log.deadLettered(t.delivery, reason);
                }
            } else if (t.disposition == Tracked.Disposition.LOST) {
                t.outcome = Outcome.STALE;
            }
        }
        int abandoned =
                recordAtOnce(
                        untried,
                        receipts -> new Abandonment(owner, receipts),
                        "give back untried messages",
                        store::abandon,
                        Outcome.ABANDONED,
                        Outcome.NOT_RECORDED);
        writes.logSummary();
        return new Relay.Result(
                tracked.size(), published.size(), completed, released, deadLettered, abandoned);
    }

    /**
     * Writes the outcome of {@code group} in one store call (its {@code request} for all their
     * receipts) that answers the stale receipts, and sets each delivery's outcome: {@code
     * recorded}, {@link Outcome#STALE}, or {@code notRecorded} when the write failed.
     *
     * @return how many were recorded
     */
    private <R> int recordAtOnce(
            List<Tracked> group,
            Function<List<String>, R> request,
            String what,
            Function<R, Set<String>> write,
            Outcome recorded,
            Outcome notRecorded) {
        if (group.isEmpty()) {
            return 0;
        }
        renew();
        R written = request.apply(receipts(group));
        Set<String> stale = writes.run(what, () -> write.apply(written));
        int count = 0;
        for (Tracked t : group) {
            leases.forget(t);
            if (stale == null) {
                t.outcome = notRecorded;
            } else if (stale.contains(t.receipt())) {
                t.outcome = Outcome.STALE;
            } else {
                t.outcome = recorded;
                count++;
            }
        }
        return count;
    }

    /** Keeps the leases alive while a long run of writes goes on. */
    private void renew() {
        leases.renewIfDue(settings.clock().instant());
    }

    private static Outcome outcome(@Nullable Boolean ok, Outcome recorded) {
        if (ok == null) {
            return Outcome.NOT_RECORDED;
        }
        return ok ? recorded : Outcome.STALE;
    }

    private static List<Tracked> of(List<Tracked> tracked, Tracked.Disposition disposition) {
        List<Tracked> selected = new ArrayList<>();
        for (Tracked t : tracked) {
            if (t.disposition == disposition) {
                selected.add(t);
            }
        }
        return selected;
    }

    private static List<String> receipts(List<Tracked> tracked) {
        List<String> receipts = new ArrayList<>(tracked.size());
        for (Tracked t : tracked) {
            receipts.add(t.receipt());
        }
        return receipts;
    }
}
