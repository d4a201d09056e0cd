package io.outbox4j.engine;

import io.outbox4j.api.Extension;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Keeps the leases of one batch alive: every {@link Settings#renewEvery()} (a third of the lease)
 * it extends every lease the batch still holds with one {@link OutboxStore#extend} call, and it
 * tells whether the leases can still be proven — whether more than {@link Settings#renewalMargin()}
 * is left of the last lease the store confirmed. Receipts the store reports stale are dropped and
 * their deliveries marked lost. Confined to the batch's thread.
 */
final class LeaseKeeper {
    private final Settings settings;
    private final OutboxStore store;
    private final StoreWrites writes;

    /** Receipt → delivery, for every lease the batch still holds, in claim order. */
    private final Map<String, Tracked> held = new LinkedHashMap<>();

    /** The end of the last lease the store confirmed for every held receipt. */
    private Instant provenUntil;

    private Instant nextRenewal;

    LeaseKeeper(
            Settings settings,
            OutboxStore store,
            StoreWrites writes,
            Instant claimTime,
            List<Tracked> claimed) {
        this.settings = settings;
        this.store = store;
        this.writes = writes;
        this.provenUntil = claimTime.plus(settings.lease());
        this.nextRenewal = claimTime.plus(settings.renewEvery());
        for (Tracked t : claimed) {
            held.put(t.receipt(), t);
        }
    }

    /**
     * Whether the batch may still hand a message to the publisher: its lease ends later than {@code
     * now} plus the margin.
     */
    boolean provable(Instant now) {
        return now.isBefore(provenUntil.minus(settings.renewalMargin()));
    }

    Instant provenUntil() {
        return provenUntil;
    }

    /** Time until the next renewal is due, at least zero. */
    Duration untilNextRenewal(Instant now) {
        if (held.isEmpty()) {
            return Duration.ofNanos(Durations.MAX_WAIT_NANOS);
        }
        Duration d = Duration.between(now, nextRenewal);
        return d.isNegative() ? Duration.ZERO : d;
    }

    /** Logs the renewal failures not logged one by one. */
    void logSummary() {
        writes.logSummary();
    }

    /** Stops renewing the lease of a delivery whose outcome was written. */
    void forget(Tracked t) {
        held.remove(t.receipt());
    }

    /**
     * Renews the held leases if a renewal is due at {@code now}.
     *
     * @return the deliveries a renewal found lost (stale receipts), possibly none
     */
    List<Tracked> renewIfDue(Instant now) {
        if (held.isEmpty() || now.isBefore(nextRenewal)) {
            return List.of();
        }
        Instant until = now.plus(settings.lease());
        Extension extension =
                new Extension(settings.owner(), new ArrayList<>(held.keySet()), until);
        Set<String> stale = writes.run("renew leases", () -> store.extend(extension));
        if (stale == null) {
            // Not confirmed: the leases stand as they were; try again soon.
            nextRenewal = now.plus(settings.renewalRetry());
            return List.of();
        }
        provenUntil = until;
        nextRenewal = now.plus(settings.renewEvery());
        if (stale.isEmpty()) {
            return List.of();
        }
        List<Tracked> lost = new ArrayList<>();
        for (String receipt : stale) {
            Tracked t = held.remove(receipt);
            if (t != null) {
                t.lost = true;
                lost.add(t);
            }
        }
        return lost;
    }
}
