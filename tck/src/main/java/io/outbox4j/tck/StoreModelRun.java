package io.outbox4j.tck;

import com.google.errorprone.annotations.FormatMethod;
import com.google.errorprone.annotations.FormatString;
import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Applies one sequence of {@link StoreStep}s to a store and to a model of the {@link OutboxStore}
 * contract, and fails with an {@link AssertionError} naming the step and the broken rule at the
 * first difference. The model holds, for each committed message still in the outbox, its key, when
 * it is available, its live lease (owner, receipt, end), whether it is dead and its attempts.
 *
 * <p>What is checked at every claim: each delivered message was committed and is still in the
 * outbox, is not dead, is due (not leased, its {@code notBefore} or retry time has come), every
 * earlier message of its key still in the outbox was delivered before it in the same claim, its
 * attempt is one more than the tries counted so far, and the claim is not shorter than the number
 * of messages that are claimable on their own (the heads of their keys, and unkeyed messages), up
 * to the limit. At every write: the stale receipts (finished, claimed again since, foreign owner)
 * are exactly the ones the model expects. At the end: after every lease and delay has passed and
 * every dead letter was replayed, claims drain every committed message that was not discarded, each
 * exactly once.
 */
final class StoreModelRun {
    static final int OWNERS = 3;
    private static final int MAX_DRAIN_CLAIMS = 500;

    private final OutboxStoreContract kit;
    private final boolean transactions;
    private final Optional<OutboxAdmin> admin;
    private final String prefix = "pbt-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    private final List<String> log = new ArrayList<>();

    /** Committed messages still in the outbox, in enqueue order. */
    private final Map<String, Row> rows = new LinkedHashMap<>();

    /** Every receipt each owner received, in order (stale ones stay, for stale writes). */
    private final List<List<String>> receipts = new ArrayList<>();

    private final Set<String> rolledBack = new HashSet<>();
    private final Set<String> finished = new HashSet<>();
    private final List<String> deadIds = new ArrayList<>();
    private Instant now = Instant.EPOCH; // each run starts from the wall clock
    private int ids;

    /** One committed message as the model sees it. */
    private static final class Row {
        final String id;
        final @Nullable String key;
        Instant availableAt;
        @Nullable String owner;
        @Nullable String receipt;
        boolean dead;
        int attempts;

        Row(String id, @Nullable String key, Instant availableAt) {
            this.id = id;
            this.key = key;
            this.availableAt = availableAt;
        }

        boolean leased(Instant now) {
            return receipt != null && availableAt.isAfter(now);
        }

        @Override
        public String toString() {
            return id + (key == null ? "" : "(" + key + ")");
        }
    }

    StoreModelRun(OutboxStoreContract kit) {
        this.kit = kit;
        this.transactions = kit.transactionsUnsupported().isEmpty();
        this.admin = kit.admin();
        for (int i = 0; i < OWNERS; i++) {
            receipts.add(new ArrayList<>());
        }
    }

    /** Resets the store, runs the steps, then drains; throws at the first difference. */
    void run(List<StoreStep> steps) {
        kit.resetStore();
        now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        syncWithWallClock();
        for (StoreStep step : steps) {
            log.add(step.toString());
            apply(step);
        }
        drain();
    }

    private void apply(StoreStep step) {
        if (step instanceof StoreStep.Enqueue e) {
            enqueue(e);
        } else if (step instanceof StoreStep.Claim c) {
            claim(c.owner(), c.limit(), Duration.ofSeconds(c.leaseSeconds()));
        } else if (step instanceof StoreStep.Complete c) {
            int from = c.foreign() ? (c.owner() + 1) % OWNERS : c.owner();
            List<String> picked = pick(from, c.picks());
            if (!picked.isEmpty()) {
                Set<String> expected = staleAmong(owner(c.owner()), picked);
                Set<String> stale =
                        store(c.owner()).complete(new Completion(owner(c.owner()), picked));
                checkStale("complete", picked, expected, stale);
                for (String r : picked) {
                    if (!expected.contains(r)) {
                        Row row = leasedRow(r);
                        rows.remove(row.id);
                        finished.add(row.id);
                    }
                }
            }
        } else if (step instanceof StoreStep.Release r) {
            pick(r.owner(), List.of(r.pick())).forEach(receipt -> release(r, receipt));
        } else if (step instanceof StoreStep.DeadLetter d) {
            pick(d.owner(), List.of(d.pick())).forEach(receipt -> deadLetter(d.owner(), receipt));
        } else if (step instanceof StoreStep.Extend x) {
            List<String> picked = pick(x.owner(), x.picks());
            if (!picked.isEmpty()) {
                Instant until = now.plusSeconds(x.seconds());
                Set<String> expected = staleAmong(owner(x.owner()), picked);
                Set<String> stale =
                        store(x.owner()).extend(new Extension(owner(x.owner()), picked, until));
                checkStale("extend", picked, expected, stale);
                picked.stream()
                        .filter(r -> !expected.contains(r))
                        .forEach(r -> leasedRow(r).availableAt = until);
            }
        } else if (step instanceof StoreStep.Abandon a) {
            List<String> picked = pick(a.owner(), a.picks());
            if (!picked.isEmpty()) {
                Set<String> expected = staleAmong(owner(a.owner()), picked);
                Set<String> stale =
                        store(a.owner()).abandon(new Abandonment(owner(a.owner()), picked));
                checkStale("abandon", picked, expected, stale);
                for (String r : picked) {
                    if (!expected.contains(r)) {
                        Row row = leasedRow(r);
                        clearLease(row);
                        row.availableAt = now;
                        row.attempts = Math.max(0, row.attempts - 1);
                    }
                }
            }
        } else if (step instanceof StoreStep.Admin a) {
            adminStep(a);
        } else if (step instanceof StoreStep.Advance a) {
            now = now.plusSeconds(a.seconds()).plusMillis(1);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Steps
    // ------------------------------------------------------------------------------------------------

    private void enqueue(StoreStep.Enqueue e) {
        boolean rollBack = e.rollBack() && transactions;
        List<Message> messages = new ArrayList<>();
        Instant notBefore = e.delaySeconds() > 0 ? now.plusSeconds(e.delaySeconds()) : null;
        for (int k : e.keys()) {
            String id = prefix + ++ids;
            Message.Builder b =
                    Message.builder()
                            .id(id)
                            .topic("tck-properties")
                            .module("tck")
                            .payload("{\"n\":" + ids + "}")
                            .notBefore(notBefore);
            if (k >= 0) {
                b.key(prefix + "k" + k);
            }
            messages.add(b.build());
        }
        if (rollBack) {
            kit.enqueueRolledBack(messages);
            messages.forEach(m -> rolledBack.add(m.id()));
            return;
        }
        kit.enqueueCommitted(messages);
        syncWithWallClock();
        for (Message m : messages) {
            rows.put(
                    m.id(),
                    new Row(m.id(), m.key().orElse(null), notBefore == null ? now : notBefore));
        }
    }

    private List<Delivery> claim(int owner, int limit, Duration lease) {
        List<Row> heads = claimableOnTheirOwn();
        List<Delivery> claimed =
                store(owner).claim(new ClaimRequest(owner(owner), now, lease, limit));
        check(
                claimed.size() <= limit,
                "the claim returned %d messages for a limit of %d",
                claimed.size(),
                limit);
        Set<String> inThisClaim = new LinkedHashSet<>();
        for (Delivery d : claimed) {
            String id = d.message().id();
            Row row = rows.get(id);
            if (row == null) {
                String why =
                        rolledBack.contains(id)
                                ? "was enqueued in a transaction that rolled back"
                                : finished.contains(id)
                                        ? "was completed or discarded earlier"
                                        : "was never enqueued";
                throw failure("the claim handed out %s, which %s", id, why);
            }
            check(inThisClaim.add(id), "the claim handed out %s twice", row);
            check(!row.dead, "the claim handed out %s, which is dead-lettered", row);
            check(
                    !row.leased(now),
                    "the claim handed out %s while %s still holds its lease (until %s, now %s)",
                    row,
                    row.owner,
                    row.availableAt,
                    now);
            check(
                    !row.availableAt.isAfter(now),
                    "the claim handed out %s before it is due (available at %s, now %s)",
                    row,
                    row.availableAt,
                    now);
            check(
                    java.util.Objects.equals(d.message().key().orElse(null), row.key),
                    "the claim handed out %s with key %s",
                    row,
                    d.message().key().orElse(null));
            if (row.key != null) {
                for (Row earlier : rows.values()) {
                    if (earlier == row) {
                        break;
                    }
                    if (row.key.equals(earlier.key) && !inThisClaim.contains(earlier.id)) {
                        throw failure(
                                "per-key order: the claim handed out %s while %s, enqueued earlier"
                                        + " with the same key, is still in the outbox (%s) and was"
                                        + " not handed out before it in this claim",
                                row, earlier, describe(earlier));
                    }
                }
            }
            check(
                    d.attempt() == row.attempts + 1,
                    "the claim handed out %s as attempt %d, but %d tries were counted before"
                            + " (abandoned claims do not count)",
                    row,
                    d.attempt(),
                    row.attempts);
        }
        int expectedAtLeast = Math.min(limit, heads.size());
        check(
                claimed.size() >= expectedAtLeast,
                "the claim returned %d messages, but %s were claimable (limit %d)",
                claimed.size(),
                heads,
                limit);
        for (Delivery d : claimed) {
            Row row = Objects.requireNonNull(rows.get(d.message().id())); // checked above
            row.owner = owner(owner);
            row.receipt = d.receipt();
            row.availableAt = now.plus(lease);
            row.attempts++;
            receipts.get(owner).add(d.receipt());
        }
        return claimed;
    }

    private void release(StoreStep.Release r, String receipt) {
        Set<String> expected = staleAmong(owner(r.owner()), List.of(receipt));
        Instant at = now.plusSeconds(r.delaySeconds());
        boolean released =
                store(r.owner())
                        .release(
                                new io.outbox4j.api.Release(
                                        owner(r.owner()), receipt, at, "tck: retry later"));
        check(
                released == expected.isEmpty(),
                "release of %s returned %s, expected %s",
                describeReceipt(receipt),
                released,
                expected.isEmpty());
        if (released) {
            Row row = leasedRow(receipt);
            clearLease(row);
            row.availableAt = at;
        }
    }

    private void deadLetter(int owner, String receipt) {
        Set<String> expected = staleAmong(owner(owner), List.of(receipt));
        boolean dead =
                store(owner)
                        .deadLetter(new DeadLetter(owner(owner), receipt, "tck: given up", now));
        check(
                dead == expected.isEmpty(),
                "deadLetter of %s returned %s, expected %s",
                describeReceipt(receipt),
                dead,
                expected.isEmpty());
        if (dead) {
            Row row = leasedRow(receipt);
            clearLease(row);
            row.dead = true;
            deadIds.add(row.id);
        }
    }

    private void adminStep(StoreStep.Admin a) {
        if (admin.isEmpty() || deadIds.isEmpty()) {
            return;
        }
        String id = deadIds.get(a.pick() % deadIds.size());
        Row row = rows.get(id);
        boolean isDead = row != null && row.dead;
        int changed =
                a.discard()
                        ? admin.get().discard(List.of(id))
                        : admin.get().replay(List.of(id), now);
        check(
                changed == (isDead ? 1 : 0),
                "%s of %s changed %d messages, expected %d",
                a.discard() ? "discard" : "replay",
                id,
                changed,
                isDead ? 1 : 0);
        if (isDead && row != null) {
            deadIds.remove(id);
            if (a.discard()) {
                rows.remove(id);
                finished.add(id);
            } else {
                row.dead = false;
                row.attempts = 0;
                row.availableAt = now;
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Drain
    // ------------------------------------------------------------------------------------------------

    private void drain() {
        log.add("drain: +1h, replay every dead letter, claim and complete until empty");
        now = now.plus(Duration.ofHours(1));
        if (admin.isPresent()) {
            for (String id : new ArrayList<>(deadIds)) {
                adminStep(new StoreStep.Admin(deadIds.indexOf(id), false));
            }
        }
        int drainer = 0;
        for (int i = 0; i < MAX_DRAIN_CLAIMS; i++) {
            List<Delivery> claimed = claim(drainer, 50, Duration.ofMinutes(1));
            if (claimed.isEmpty()) {
                break;
            }
            List<String> done = claimed.stream().map(Delivery::receipt).toList();
            Set<String> stale = store(drainer).complete(new Completion(owner(drainer), done));
            checkStale("complete", done, Set.of(), stale);
            for (Delivery d : claimed) {
                rows.remove(d.message().id());
                finished.add(d.message().id());
            }
        }
        List<Row> left = rows.values().stream().filter(r -> !blockedByDead(r)).toList();
        check(
                left.isEmpty(),
                "nothing is lost: after every lease and delay passed and the dead letters were"
                        + " replayed, claims returned nothing more, but %s are still in the outbox"
                        + " and claimable",
                left);
    }

    /** Without an admin port, dead letters stay, and so do the later messages of their keys. */
    private boolean blockedByDead(Row r) {
        if (r.dead) {
            return true;
        }
        for (Row e : rows.values()) {
            if (e == r) {
                return false;
            }
            if (e.dead && r.key != null && r.key.equals(e.key)) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------------
    // Model helpers
    // ------------------------------------------------------------------------------------------------

    /**
     * Messages a claim must be able to take on their own: due, first of their key in the outbox.
     */
    private List<Row> claimableOnTheirOwn() {
        List<Row> heads = new ArrayList<>();
        Set<String> seenKeys = new HashSet<>();
        for (Row r : rows.values()) {
            boolean first = r.key == null || seenKeys.add(r.key);
            if (first && !r.dead && !r.availableAt.isAfter(now)) {
                heads.add(r);
            }
        }
        return heads;
    }

    /** The receipts among {@code picked} that are not live leases of {@code owner}. */
    private Set<String> staleAmong(String owner, List<String> picked) {
        Set<String> stale = new LinkedHashSet<>();
        for (String r : picked) {
            Row row = byReceipt(r);
            if (row == null || !owner.equals(row.owner)) {
                stale.add(r);
            }
        }
        return stale;
    }

    private void checkStale(
            String what, List<String> picked, Set<String> expected, Set<String> got) {
        if (!expected.equals(got)) {
            throw failure(
                    "%s of %s reported %s as stale, expected %s",
                    what,
                    picked.stream().map(this::describeReceipt).toList(),
                    got.stream().map(this::describeReceipt).toList(),
                    expected.stream().map(this::describeReceipt).toList());
        }
    }

    private List<String> pick(int owner, List<Integer> picks) {
        List<String> mine = receipts.get(owner);
        if (mine.isEmpty()) {
            return List.of();
        }
        return picks.stream()
                .map(p -> mine.get(p % mine.size()))
                .distinct()
                .collect(Collectors.toList());
    }

    private @Nullable Row byReceipt(String receipt) {
        for (Row r : rows.values()) {
            if (receipt.equals(r.receipt)) {
                return r;
            }
        }
        return null;
    }

    /** The row of a receipt the model holds as live (it only picks receipts it handed out). */
    private Row leasedRow(String receipt) {
        return Objects.requireNonNull(byReceipt(receipt), receipt);
    }

    private static void clearLease(Row row) {
        row.owner = null;
        row.receipt = null;
    }

    private String describe(Row r) {
        if (r.dead) {
            return "dead-lettered";
        }
        if (r.leased(now)) {
            return "leased by " + r.owner + " until " + r.availableAt;
        }
        return r.availableAt.isAfter(now) ? "waiting until " + r.availableAt : "due";
    }

    private String describeReceipt(String receipt) {
        Row r = byReceipt(receipt);
        return r == null ? "a finished or superseded receipt" : "the receipt of " + r;
    }

    private OutboxStore store(int owner) {
        return owner == 1 ? kit.secondStore() : kit.store();
    }

    private static String owner(int owner) {
        return "pbt-owner-" + owner;
    }

    private void syncWithWallClock() {
        Instant wall =
                Instant.now()
                        .plus(kit.clockSkewTolerance())
                        .truncatedTo(ChronoUnit.MILLIS)
                        .plusMillis(1);
        if (wall.isAfter(now)) {
            now = wall;
        }
    }

    @FormatMethod
    private void check(boolean ok, @FormatString String format, @Nullable Object... args) {
        if (!ok) {
            throw failure(format, args);
        }
    }

    @FormatMethod
    private AssertionError failure(@FormatString String format, @Nullable Object... args) {
        return new AssertionError(
                "step "
                        + log.size()
                        + " ("
                        + (log.isEmpty() ? "start" : log.get(log.size() - 1))
                        + "): "
                        + String.format(format, args)
                        + "\n  steps so far: "
                        + String.join("; ", log));
    }
}
