package io.outbox4j.tck;

import static io.outbox4j.tck.KitReport.defect;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Quis custodiet ipsos custodes: the kit runs (through junit-platform-testkit) against the
 * reference store wrapped in one deliberate defect at a time, and each run must fail exactly the
 * rules about that defect, with a message that says what the store did wrong, while every other
 * rule still passes.
 *
 * <p>The broken stores are static nested classes, so surefire (which excludes {@code *$*} classes)
 * never runs them directly.
 */
class BrokenStoresTest {

    // ------------------------------------------------------------------------------------------------
    // The broken stores, one defect each
    // ------------------------------------------------------------------------------------------------

    /** Control: the forwarding wrapper with no defect must pass every rule. */
    static class NoDefect extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store);
        }
    }

    /** Leases one message more than asked for. */
    static class IgnoresTheLimit extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    int limit = Math.min(ClaimRequest.MAX_LIMIT, r.limit() + 1);
                    return super.claim(new ClaimRequest(r.owner(), r.now(), r.lease(), limit));
                }
            };
        }
    }

    /** Also hands out messages that another owner holds under a live lease. */
    static class SharesLiveLeases extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> got = new ArrayList<>(super.claim(r));
                    Set<String> ids =
                            got.stream().map(d -> d.message().id()).collect(Collectors.toSet());
                    for (Lease l : latest.values()) {
                        if (got.size() < r.limit()
                                && !l.owner().equals(r.owner())
                                && l.until().isAfter(r.now())
                                && ids.add(l.delivery().message().id())) {
                            got.add(l.delivery());
                        }
                    }
                    return got;
                }
            };
        }
    }

    /** Selects the right messages but lists them newest first. */
    static class ListsNewestFirst extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> got = new ArrayList<>(super.claim(r));
                    Collections.reverse(got);
                    return got;
                }
            };
        }
    }

    /** A lease never ends: a message whose lease expired never comes back (it is lost). */
    static class LeaseNeverExpires extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                private final Set<String> handedOut = new HashSet<>();

                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    return super.claim(r).stream()
                            .filter(d -> handedOut.add(d.message().id()))
                            .collect(Collectors.toList());
                }

                @Override
                public synchronized boolean release(Release r) {
                    boolean done = super.release(r);
                    if (done) {
                        handedOut.remove(idOfReceipt.get(r.receipt()));
                    }
                    return done;
                }

                @Override
                public synchronized Set<String> abandon(Abandonment a) {
                    Set<String> stale = super.abandon(a);
                    a.receipts().stream()
                            .filter(r -> !stale.contains(r))
                            .forEach(r -> handedOut.remove(idOfReceipt.get(r)));
                    return stale;
                }

                @Override
                public synchronized boolean deadLetter(DeadLetter d) {
                    boolean done = super.deadLetter(d);
                    if (done) {
                        handedOut.remove(idOfReceipt.get(d.receipt()));
                    }
                    return done;
                }
            };
        }
    }

    /**
     * complete(…) finds the message by id and completes it, whatever the owner or receipt (DELETE
     * WHERE id = ?).
     */
    static class CompletesByMessageId extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized Set<String> complete(Completion c) {
                    Set<String> stale = new TreeSet<>();
                    for (String receipt : c.receipts()) {
                        String id = idOfReceipt.get(receipt);
                        Lease holder = id == null ? null : latest.get(id);
                        Completion one =
                                holder == null
                                        ? new Completion(c.owner(), List.of(receipt))
                                        : new Completion(
                                                holder.owner(),
                                                List.of(holder.delivery().receipt()));
                        if (!super.complete(one).isEmpty()) {
                            stale.add(receipt);
                        }
                    }
                    return stale;
                }
            };
        }
    }

    /** release(…) finds the message by id and releases it, whatever the owner or receipt. */
    static class ReleasesByMessageId extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized boolean release(Release r) {
                    String id = idOfReceipt.get(r.receipt());
                    Lease holder = id == null ? null : latest.get(id);
                    return holder == null
                            ? super.release(r)
                            : super.release(
                                    new Release(
                                            holder.owner(),
                                            holder.delivery().receipt(),
                                            r.availableAt(),
                                            r.error()));
                }
            };
        }
    }

    /** release(…) makes the message available at once, whatever availableAt says. */
    static class ReleaseIgnoresAvailableAt extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized boolean release(Release r) {
                    return super.release(
                            new Release(r.owner(), r.receipt(), Instant.EPOCH, r.error()));
                }
            };
        }
    }

    /**
     * Enqueues on a connection of its own in auto-commit mode, outside the caller's transaction.
     */
    static class RolledBackEnqueueVisible extends BrokenStoreContract {
        @Override
        protected void enqueueRolledBack(List<Message> messages) {
            reference.enqueueCommitted(messages);
        }
    }

    /** Reports attempt 1 on every claim. */
    static class AttemptNotCounted extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingDeliveries(store, d -> ForwardingStore.withAttempt(d, 1));
        }
    }

    /** Keeps the payload in a text column: bytes that are not valid UTF-8 are replaced. */
    static class PayloadStoredAsText extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingMessages(
                    store,
                    m ->
                            m.toBuilder()
                                    .limits(
                                            MessageLimits.DEFAULTS.withMaxPayloadBytes(
                                                    Integer.MAX_VALUE))
                                    .payload(new String(m.payload(), StandardCharsets.UTF_8))
                                    .build());
        }
    }

    /** Keeps headers in a JSON object that sorts its keys. */
    static class HeadersSorted extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingMessages(
                    store, m -> m.toBuilder().headers(new TreeMap<>(m.headers())).build());
        }
    }

    /**
     * deadLetter(…) records the reason but only delays the message by an hour: it is claimed again
     * later.
     */
    static class DeadLetterRetriesLater extends BrokenStoreContract {
        private final Map<String, String> reasons = new ConcurrentHashMap<>();

        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized boolean deadLetter(DeadLetter dl) {
                    String id = idOfReceipt.get(dl.receipt());
                    boolean done =
                            super.release(
                                    new Release(
                                            dl.owner(),
                                            dl.receipt(),
                                            dl.at().plus(Duration.ofHours(1)),
                                            dl.reason()));
                    if (done) {
                        reasons.put(id, dl.reason());
                    }
                    return done;
                }
            };
        }

        @Override
        protected Optional<String> deadLetterReason(String messageId) {
            return Optional.ofNullable(reasons.get(messageId));
        }
    }

    /** Enqueue is INSERT … ON CONFLICT DO NOTHING: a duplicate id is dropped silently. */
    static class IgnoresDuplicates extends BrokenStoreContract {
        @Override
        protected void enqueueCommitted(List<Message> messages) {
            InMemoryOutboxStore.Transaction tx = reference.begin();
            Set<String> inThisTransaction = new HashSet<>();
            for (Message m : messages) {
                if (reference.attempts(m.id()).isEmpty() && inThisTransaction.add(m.id())) {
                    reference.enqueue(tx, m);
                }
            }
            tx.commit();
        }
    }

    /** Forgets notBefore when it stores a message (but returns the original message on claim). */
    static class NotBeforeIgnored extends BrokenStoreContract {
        private final Map<String, Message> originals = new ConcurrentHashMap<>();

        @Override
        protected void enqueueCommitted(List<Message> messages) {
            messages.forEach(m -> originals.putIfAbsent(m.id(), m));
            reference.enqueueCommitted(
                    messages.stream()
                            .map(m -> m.toBuilder().notBefore(null).build())
                            .collect(Collectors.toList()));
        }

        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingMessages(store, m -> originals.getOrDefault(m.id(), m));
        }
    }

    /**
     * A store that keeps every enqueued message altered by {@link #stored} (whichever way the kit
     * enqueues it), and whose claims hand out the originals recorded in {@link #originals}.
     */
    abstract static class StoredAltered extends BrokenStoreContract {
        /** id → the message as enqueued, for those {@link #stored} recorded. */
        final Map<String, Message> originals = new ConcurrentHashMap<>();

        /** The message the reference store is given instead of {@code m}. */
        abstract Message stored(Message m);

        private List<Message> altered(List<Message> messages) {
            return messages.stream().map(this::stored).toList();
        }

        /** A delivery with the message as enqueued. */
        Delivery restore(Delivery d) {
            return new Delivery(
                    originals.getOrDefault(d.message().id(), d.message()),
                    d.receipt(),
                    d.attempt(),
                    d.enqueuedAt());
        }

        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingDeliveries(store, this::restore);
        }

        @Override
        protected void enqueueCommitted(List<Message> messages) {
            super.enqueueCommitted(altered(messages));
        }

        @Override
        protected void enqueueOneCommitted(Message message) {
            super.enqueueOneCommitted(stored(message));
        }

        @Override
        protected void enqueueRolledBack(List<Message> messages) {
            super.enqueueRolledBack(altered(messages));
        }

        @Override
        protected void enqueueCommittingDespiteFailure(List<Message> messages) {
            super.enqueueCommittingDespiteFailure(altered(messages));
        }
    }

    /**
     * Keys are hidden from the ordering (the reference store sees unkeyed messages; claims return
     * the messages as enqueued). The base of the stores that get per-key order wrong.
     */
    abstract static class KeysHidden extends StoredAltered {
        /** key → its message ids in enqueue order (rejected and rolled-back ones included). */
        final Map<String, List<String>> keyOrder = new ConcurrentHashMap<>();

        @Override
        Message stored(Message m) {
            if (originals.putIfAbsent(m.id(), m) == null && m.key().isPresent()) {
                keyOrder.computeIfAbsent(m.key().get(), k -> new ArrayList<>()).add(m.id());
            }
            return m.toBuilder().key(m.key().map(this::storedKey).orElse(null)).build();
        }

        /** The key the reference store sees for a message's key: none, unless overridden. */
        String storedKey(String key) {
            return null;
        }

        @Override
        protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
            return Optional.of(breakIt(reference.withDeadLettersBlockingTheirKey(false)));
        }
    }

    /** Per-key order is not kept at all: the claim takes due messages by availability only. */
    static class IgnoresKeys extends KeysHidden {}

    /**
     * Holds a keyed message back only while an earlier one of its key is leased: a head that waits
     * for its retry or its notBefore, or is dead-lettered, lets its followers through (the bug of
     * the first landing).
     */
    static class FencesOnLeasesOnly extends KeysHidden {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> out = new ArrayList<>();
                    List<String> giveBack = new ArrayList<>();
                    Set<String> kept = new HashSet<>();
                    for (Delivery d : super.claim(r)) {
                        Delivery real = restore(d);
                        boolean blocked = false;
                        if (real.message().key().isPresent()) {
                            for (String e : keyOrder.get(real.message().key().get())) {
                                if (e.equals(real.message().id())) {
                                    break;
                                }
                                Lease l = latest.get(e);
                                blocked |=
                                        l != null
                                                && l.until().isAfter(r.now())
                                                && !kept.contains(e);
                            }
                        }
                        if (blocked) {
                            giveBack.add(d.receipt());
                        } else {
                            kept.add(real.message().id());
                            out.add(real);
                        }
                    }
                    if (!giveBack.isEmpty()) {
                        super.abandon(new Abandonment(r.owner(), giveBack));
                    }
                    return out;
                }
            };
        }
    }

    /** Reads one page of at most 100 rows per claim, whatever the limit. */
    static class ClaimsOneHundredAtMost extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    return super.claim(
                            new ClaimRequest(
                                    r.owner(),
                                    r.now(),
                                    r.lease(),
                                    Math.min(100, r.limit()),
                                    r.member()));
                }
            };
        }
    }

    /** Compares keys by their {@code String.hashCode()}: keys that share a hash share an order. */
    static class KeysComparedByHash extends KeysHidden {
        @Override
        String storedKey(String key) {
            return "h" + key.hashCode();
        }
    }

    /** Compares keys ignoring case (a case-insensitive collation). */
    static class KeysComparedIgnoringCase extends KeysHidden {
        @Override
        String storedKey(String key) {
            return key.toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Built with the option under which dead letters do not block, though store() must not be. */
    static class DeadLettersDoNotBlock extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return store.withDeadLettersBlockingTheirKey(false);
        }
    }

    /**
     * abandon(…) is a release back to the enqueue time: the message keeps its place, but the
     * attempt stays counted.
     */
    static class AbandonCountsTheAttempt extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized Set<String> abandon(Abandonment a) {
                    Set<String> stale = new TreeSet<>();
                    for (String receipt : a.receipts()) {
                        String id = idOfReceipt.get(receipt);
                        Lease l = id == null ? null : latest.get(id);
                        if (l == null
                                || !release(
                                        new Release(
                                                a.owner(),
                                                receipt,
                                                l.delivery().enqueuedAt(),
                                                "abandoned"))) {
                            stale.add(receipt);
                        }
                    }
                    return stale;
                }
            };
        }
    }

    /**
     * abandon(…) takes the attempt back but makes the message due at the store's clock, behind
     * every message enqueued meanwhile.
     */
    static class AbandonLosesItsPlace extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                private final Map<String, Integer> givenBack = new HashMap<>();

                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> out = new ArrayList<>();
                    for (Delivery d : super.claim(r)) {
                        int back = givenBack.getOrDefault(d.message().id(), 0);
                        out.add(
                                new Delivery(
                                        d.message(),
                                        d.receipt(),
                                        Math.max(1, d.attempt() - back),
                                        d.enqueuedAt()));
                    }
                    return out;
                }

                @Override
                public synchronized Set<String> abandon(Abandonment a) {
                    Set<String> stale = new TreeSet<>();
                    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
                    for (String receipt : a.receipts()) {
                        String id = idOfReceipt.get(receipt);
                        if (id != null && release(new Release(a.owner(), receipt, now, "x"))) {
                            givenBack.merge(id, 1, Integer::sum);
                        } else {
                            stale.add(receipt);
                        }
                    }
                    return stale;
                }
            };
        }
    }

    /** extend(…) finds the message by id and extends its lease, whatever the owner or receipt. */
    static class ExtendsByMessageId extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized Set<String> extend(Extension e) {
                    Set<String> stale = new TreeSet<>();
                    for (String receipt : e.receipts()) {
                        String id = idOfReceipt.get(receipt);
                        Lease holder = id == null ? null : latest.get(id);
                        Extension one =
                                holder == null
                                        ? new Extension(e.owner(), List.of(receipt), e.until())
                                        : new Extension(
                                                holder.owner(),
                                                List.of(holder.delivery().receipt()),
                                                e.until());
                        if (!super.extend(one).isEmpty()) {
                            stale.add(receipt);
                        }
                    }
                    return stale;
                }
            };
        }
    }

    /**
     * Every write checks the owner but not the receipt: an owner's old receipt works on its new
     * lease of the same message (WHERE id = ? AND lease_owner = ?).
     */
    static class ChecksOwnerNotReceipt extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                /** The owner's live receipt for the message behind {@code receipt}. */
                private String current(String owner, String receipt) {
                    String id = idOfReceipt.get(receipt);
                    Lease l = id == null ? null : latest.get(id);
                    return l != null && l.owner().equals(owner) ? l.delivery().receipt() : receipt;
                }

                @Override
                public synchronized Set<String> complete(Completion c) {
                    Set<String> stale = new TreeSet<>();
                    for (String r : c.receipts()) {
                        String live = current(c.owner(), r);
                        if (!super.complete(new Completion(c.owner(), List.of(live))).isEmpty()) {
                            stale.add(r);
                        }
                    }
                    return stale;
                }

                @Override
                public synchronized boolean release(Release r) {
                    return super.release(
                            new Release(
                                    r.owner(),
                                    current(r.owner(), r.receipt()),
                                    r.availableAt(),
                                    r.error()));
                }

                @Override
                public synchronized boolean deadLetter(DeadLetter d) {
                    return super.deadLetter(
                            new DeadLetter(
                                    d.owner(),
                                    current(d.owner(), d.receipt()),
                                    d.reason(),
                                    d.at()));
                }

                @Override
                public synchronized Set<String> extend(Extension e) {
                    Set<String> stale = new TreeSet<>();
                    for (String r : e.receipts()) {
                        String live = current(e.owner(), r);
                        if (!super.extend(new Extension(e.owner(), List.of(live), e.until()))
                                .isEmpty()) {
                            stale.add(r);
                        }
                    }
                    return stale;
                }

                @Override
                public synchronized Set<String> abandon(Abandonment a) {
                    Set<String> stale = new TreeSet<>();
                    for (String r : a.receipts()) {
                        String live = current(a.owner(), r);
                        if (!super.abandon(new Abandonment(a.owner(), List.of(live))).isEmpty()) {
                            stale.add(r);
                        }
                    }
                    return stale;
                }
            };
        }
    }

    /**
     * A rejected batch keeps the rows inserted before the duplicate in the caller's transaction
     * (the reference store did this before issue 13).
     */
    static class LeavesHalfARejectedBatch extends BrokenStoreContract {
        @Override
        protected void enqueueCommittingDespiteFailure(List<Message> messages) {
            InMemoryOutboxStore.Transaction tx = reference.begin();
            try {
                for (Message m : messages) {
                    reference.enqueue(tx, m);
                }
            } finally {
                tx.commit();
            }
        }
    }

    /** The single-message enqueue is INSERT … ON CONFLICT DO NOTHING; the batch form is right. */
    static class SingleEnqueueIgnoresDuplicates extends BrokenStoreContract {
        @Override
        protected void enqueueOneCommitted(Message message) {
            if (reference.attempts(message.id()).isEmpty()) {
                super.enqueueOneCommitted(message);
            }
        }
    }

    /** Stamps enqueue time with a clock 30 s ahead of the JVM's, beyond the 1 s tolerance. */
    static class EnqueueClockAhead extends BrokenStoreContract {
        @Override
        InMemoryOutboxStore newReference() {
            return new InMemoryOutboxStore(Clock.offset(Clock.systemUTC(), Duration.ofSeconds(30)));
        }
    }

    /**
     * Answers an extend with the receipt of a released or dead-lettered message as if the lease
     * were still live (it changes nothing, but reports nothing stale).
     */
    static class ExtendReportsAFinishedLeaseLive extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                final Set<String> finished = new HashSet<>();

                @Override
                public synchronized boolean release(Release release) {
                    boolean done = super.release(release);
                    if (done) {
                        finished.add(release.receipt());
                    }
                    return done;
                }

                @Override
                public synchronized boolean deadLetter(DeadLetter deadLetter) {
                    boolean done = super.deadLetter(deadLetter);
                    if (done) {
                        finished.add(deadLetter.receipt());
                    }
                    return done;
                }

                @Override
                public synchronized Set<String> extend(Extension extension) {
                    Set<String> stale = new HashSet<>(super.extend(extension));
                    stale.removeAll(finished);
                    return stale;
                }
            };
        }
    }

    /**
     * Loses every committed enqueue (the transaction commits, the rows never appear): nothing is
     * ever claimable, and the store's clock has nothing to do with it.
     */
    static class LosesCommittedEnqueues extends BrokenStoreContract {
        @Override
        protected void enqueueCommitted(List<Message> messages) {}

        @Override
        protected void enqueueOneCommitted(Message message) {}
    }

    /**
     * Stores a notBefore in the past as no notBefore at all (available from its enqueue time, as a
     * store that keeps max(notBefore, now) would); claims hand out the message as enqueued.
     */
    static class PastNotBeforeMovedToTheEnqueueTime extends StoredAltered {
        @Override
        Message stored(Message m) {
            if (m.notBefore().filter(nb -> nb.isBefore(Instant.now())).isEmpty()) {
                return m;
            }
            originals.putIfAbsent(m.id(), m);
            return m.toBuilder().notBefore(null).build();
        }
    }

    /**
     * Stamps enqueue time when a message is first claimed, with the claim's now, and keeps it: the
     * time never changes, but it is not when the store accepted the message.
     */
    static class EnqueueTimeIsTheFirstClaimsNow extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            Map<String, Instant> first = new ConcurrentHashMap<>();
            return ForwardingStore.changingClaims(
                    store,
                    (r, d) ->
                            ForwardingStore.withEnqueuedAt(
                                    d, first.computeIfAbsent(d.message().id(), id -> r.now())));
        }
    }

    /** Reports the end of the lease as the enqueue time. */
    static class EnqueueTimeIsTheLeaseEnd extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return ForwardingStore.changingClaims(
                    store, (r, d) -> ForwardingStore.withEnqueuedAt(d, r.leaseUntil()));
        }
    }

    /** Keeps enqueue time in whole seconds (a DATETIME column without a fraction). */
    static class EnqueueTimeInWholeSeconds extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingDeliveries(
                    store,
                    d ->
                            ForwardingStore.withEnqueuedAt(
                                    d, d.enqueuedAt().truncatedTo(ChronoUnit.SECONDS)));
        }
    }

    /** Reports the claim time as the enqueue time. */
    static class EnqueueTimeIsTheClaimTime extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingDeliveries(
                    store,
                    d ->
                            ForwardingStore.withEnqueuedAt(
                                    d, Instant.now().truncatedTo(ChronoUnit.MICROS)));
        }
    }

    // ------------------------------------------------------------------------------------------------
    // The verdicts
    // ------------------------------------------------------------------------------------------------

    private static final String LEASE_EXPIRY_SETUP = "must lease exactly the available message";

    /**
     * Runs the kit against {@code kit} and checks that exactly the rules in {@code expected} fail,
     * each with a message containing the given phrase, and that every other rule passes.
     */
    /**
     * Marks a rule whose failure depends on thread timing: it may pass, but if it fails it must say
     * this.
     */
    static final String TIMING_DEPENDENT = "timing-dependent: ";

    static void assertBreaksExactly(
            Class<? extends OutboxStoreContract> kit, Map<String, String> expected) {
        assertBreaksExactly(kit, NoDefect.class, expected);
    }

    /**
     * The same for any kit: {@code control} is the kit over the wrapper without a defect, whose
     * rules all pass.
     */
    static void assertBreaksExactly(
            Class<?> kit, Class<?> controlKit, Map<String, String> expected) {
        KitReport report = KitReport.of(kit);
        KitReport control = KitReport.of(controlKit);
        String failures =
                report.failed().values().stream()
                        .map(o -> "\n  " + o.rule() + ": " + o.message())
                        .collect(Collectors.joining());
        Set<String> mustFail = new TreeSet<>();
        expected.forEach(
                (rule, phrase) -> {
                    if (!phrase.startsWith(TIMING_DEPENDENT)) {
                        mustFail.add(rule);
                    }
                });
        assertThat(report.failedContainers)
                .as("no rule group may fail as a whole for %s", kit.getSimpleName())
                .isZero();
        assertThat(report.failed().keySet())
                .as(
                        "%s must fail %s (and may fail %s), but the failures were:%s",
                        kit.getSimpleName(), mustFail, expected.keySet(), failures)
                .containsAll(mustFail)
                .isSubsetOf(expected.keySet());
        report.failed()
                .forEach(
                        (rule, outcome) ->
                                assertThat(outcome.message())
                                        .as(
                                                "the failure message of %s for %s must say what the store did wrong",
                                                rule, kit.getSimpleName())
                                        .contains(
                                                expected.get(rule).replace(TIMING_DEPENDENT, "")));
        Set<String> others = new TreeSet<>(control.outcomes.keySet());
        others.removeAll(report.failed().keySet());
        assertThat(report.passed().keySet())
                .as("every rule unrelated to the defect of %s must still pass", kit.getSimpleName())
                .containsExactlyInAnyOrderElementsOf(others);
    }

    private static final String FIRST_OF_KEY =
            "in this order (it is the oldest available message, the first of its key)";
    private static final String HELD_BACK =
            "a keyed message is claimable only when every earlier message of its key is claimed in"
                    + " the same claim, before it";
    private static final String KEY_RACE =
            "a key's messages must be handed out in enqueue order and never to two holders at once";
    private static final String SAME_OWNER =
            "the old receipt is stale although the owner is the same";

    static Stream<Arguments> defects() {
        return Stream.of(
                defect(
                        "claims a hundred at most",
                        ClaimsOneHundredAtMost.class,
                        "required_claimFillsALimitAboveAHundred",
                        "one page of 100 rows"),
                defect(
                        "compares keys by their hash code",
                        KeysComparedByHash.class,
                        "required_keysDifferingOnlyByCaseOrSharingAHashAreDifferentKeys",
                        "same String.hashCode()"),
                defect(
                        "compares keys ignoring case",
                        KeysComparedIgnoringCase.class,
                        "required_keysDifferingOnlyByCaseOrSharingAHashAreDifferentKeys",
                        "in another case"),
                defect(
                        "ignores the claim limit",
                        IgnoresTheLimit.class,
                        "required_keysDifferingOnlyByCaseOrSharingAHashAreDifferentKeys",
                        "must lease exactly",
                        "required_claimHonoursTheLimit",
                        "claim(limit=2) with 5 message(s) available must lease exactly 2, but your store leased 3",
                        "required_claimOrderIsEnqueueOrderNotIdOrOccurredAtOrder",
                        "claim(limit=2) by tck-owner-a",
                        "required_keyOrderIsEnqueueOrderNotIdOrOccurredAtOrder",
                        "claim(limit=1) by tck-owner-a",
                        "required_abandonedMessageKeepsItsPlace",
                        "claim(limit=1) by tck-owner-b",
                        "required_laterMessageWaitsWhileAnEarlierOneIsLeased",
                        FIRST_OF_KEY,
                        "required_deadLetterBlocksLaterMessagesOfItsKey",
                        FIRST_OF_KEY,
                        "optional_deadLetterBlocksItsKeyUntilReplayed",
                        FIRST_OF_KEY,
                        "optional_deadLetterBlocksItsKeyUntilDiscarded",
                        FIRST_OF_KEY,
                        "required_laterMessageBecomesClaimableWhenTheEarlierOneCompletes",
                        FIRST_OF_KEY,
                        "required_keyOrderHoldsAcrossOwnersAndStoreInstances",
                        FIRST_OF_KEY,
                        "required_unkeyedAndOtherKeysAreNotHeldBack",
                        FIRST_OF_KEY),
                defect(
                        "hands a leased message to a second claimer",
                        SharesLiveLeases.class,
                        "required_keysDifferingOnlyByCaseOrSharingAHashAreDifferentKeys",
                        "must lease exactly",
                        "required_claimedMessageIsInvisibleToOtherClaimers",
                        "must return nothing because owner tck-owner-a holds a live lease",
                        "required_concurrentClaimersNeverShareAMessage",
                        "still held a live lease on it",
                        // the completing races hand a message to a second claimer only when two
                        // claims overlap
                        "required_concurrentClaimCompleteAndReleaseLoseNothing",
                        TIMING_DEPENDENT + "your store broke the contract",
                        "required_concurrentClaimersKeepPerKeyOrder",
                        TIMING_DEPENDENT + KEY_RACE,
                        "required_abandonWithAStaleOrForeignReceiptChangesNothing",
                        "is still live after stale abandons",
                        "required_extendedLeaseHidesTheMessageUntilTheNewEnd",
                        "must stay hidden",
                        "required_laterMessageWaitsWhileAnEarlierOneIsLeased",
                        "which is leased by tck-owner-a",
                        "required_keyOrderHoldsAcrossOwnersAndStoreInstances",
                        "which is leased by tck-owner-a through store()",
                        "required_keyOrderIsEnqueueOrderNotIdOrOccurredAtOrder",
                        HELD_BACK,
                        "required_unkeyedAndOtherKeysAreNotHeldBack",
                        "only its own key is blocked",
                        "required_sameOwnersOldReceiptCannotAbandon",
                        "the stale abandon must not have given back the new lease",
                        "required_sameOwnersOldReceiptCannotRelease",
                        "the stale release must not have cleared the new lease"),
                defect(
                        "lists its deliveries newest first",
                        ListsNewestFirst.class,
                        "required_claimFillsALimitAboveAHundred",
                        "must lease all 250 in enqueue order",
                        "required_keysDifferingOnlyByCaseOrSharingAHashAreDifferentKeys",
                        "must lease exactly",
                        "required_claimListsItsDeliveriesOldestFirst",
                        "claim must list its deliveries in order of availability, then of enqueue",
                        "required_claimOrderIsEnqueueOrderNotIdOrOccurredAtOrder",
                        "the tie-break is enqueue order",
                        "required_aClaimListsTheMessagesOfAKeyInEnqueueOrder",
                        "must be listed in enqueue order",
                        "required_keyOrderIsEnqueueOrderNotIdOrOccurredAtOrder",
                        "key order is enqueue order",
                        "required_abandonedFollowerWaitsBehindItsReleasedHead",
                        "(both of one key, in enqueue order)",
                        "required_laterMessageWaitsWhileAnEarlierOneWaitsForItsRetry",
                        "first (it is the first of its key)",
                        "required_concurrentClaimersKeepPerKeyOrder",
                        TIMING_DEPENDENT + KEY_RACE),
                defect(
                        "never lets a lease expire",
                        LeaseNeverExpires.class,
                        "required_expiredLeaseMakesTheMessageClaimableAgain",
                        "must be claimable again (a relay that crashed",
                        "required_everyClaimCountsOneAttempt",
                        LEASE_EXPIRY_SETUP,
                        "required_staleReceiptCannotComplete",
                        LEASE_EXPIRY_SETUP,
                        "required_staleReceiptCannotRelease",
                        LEASE_EXPIRY_SETUP,
                        "required_staleReceiptCannotDeadLetter",
                        LEASE_EXPIRY_SETUP,
                        "required_sameOwnersOldReceiptCannotComplete",
                        LEASE_EXPIRY_SETUP,
                        "required_sameOwnersOldReceiptCannotRelease",
                        LEASE_EXPIRY_SETUP,
                        "required_sameOwnersOldReceiptCannotDeadLetter",
                        LEASE_EXPIRY_SETUP,
                        "required_sameOwnersOldReceiptCannotExtend",
                        LEASE_EXPIRY_SETUP,
                        "required_sameOwnersOldReceiptCannotAbandon",
                        LEASE_EXPIRY_SETUP,
                        "required_abandonWithAStaleOrForeignReceiptChangesNothing",
                        LEASE_EXPIRY_SETUP,
                        "required_extendWithAStaleOrForeignReceiptExtendsNothing",
                        LEASE_EXPIRY_SETUP,
                        "required_extendedLeaseHidesTheMessageUntilTheNewEnd",
                        "(not extended) must be claimable",
                        "required_laterMessageWaitsWhileAnEarlierOneIsLeased",
                        "its lease ended, so it is handed out again"),
                defect(
                        "completes by message id, whatever the owner or receipt",
                        CompletesByMessageId.class,
                        "required_staleReceiptCannotComplete",
                        "must report that receipt stale and change nothing",
                        "required_completeWithAForeignOwnerOrUnknownReceiptChangesNothing",
                        "must report it stale (every write is a compare-and-set on owner and receipt)",
                        "required_sameOwnersOldReceiptCannotComplete",
                        SAME_OWNER,
                        "required_extendWithAStaleOrForeignReceiptExtendsNothing",
                        "receipt is stale once tck-owner-c claimed the message again"),
                defect(
                        "releases by message id, whatever the owner or receipt",
                        ReleasesByMessageId.class,
                        "required_staleReceiptCannotRelease",
                        "must return false (stale), but your store returned true",
                        "required_releaseWithAForeignOwnerOrUnknownReceiptChangesNothing",
                        "must return false (stale), but your store returned true",
                        "required_sameOwnersOldReceiptCannotRelease",
                        SAME_OWNER),
                defect(
                        "ignores availableAt on release",
                        ReleaseIgnoresAvailableAt.class,
                        "required_releaseHidesTheMessageUntilAvailableAt",
                        "was released with availableAt=",
                        "required_laterMessageWaitsWhileAnEarlierOneWaitsForItsRetry",
                        "which waits for its retry",
                        "required_abandonedFollowerWaitsBehindItsReleasedHead",
                        "so the abandoned follower must wait too"),
                defect(
                        "enqueues outside the caller's transaction",
                        RolledBackEnqueueVisible.class,
                        "optional_rolledBackEnqueueIsNeverClaimable",
                        "in a transaction that rolled back"),
                defect(
                        "does not count attempts",
                        AttemptNotCounted.class,
                        "required_everyClaimCountsOneAttempt",
                        "must be attempt 2, but your store reported 1",
                        "required_abandonTakesTheAttemptBack",
                        "a release counts the attempt",
                        "required_abandonedFollowerWaitsBehindItsReleasedHead",
                        "must be attempt 2, but your store reported 1",
                        "required_extendedLeaseHidesTheMessageUntilTheNewEnd",
                        "must be attempt 2, but your store reported 1"),
                defect(
                        "keeps payloads as text",
                        PayloadStoredAsText.class,
                        "required_binaryPayloadRoundTripsByteForByte",
                        "payload was 4103 bytes when enqueued but came back as",
                        "optional_payloadOfTheDefaultLimitRoundTrips",
                        "payload was 1048576 bytes when enqueued"),
                defect(
                        "sorts headers",
                        HeadersSorted.class,
                        "required_headersRoundTripInOrder",
                        "headers came back in another order"),
                defect(
                        "retries dead-lettered messages later",
                        DeadLetterRetriesLater.class,
                        "required_deadLetteredMessageIsNeverClaimedAgain",
                        "was dead-lettered a day ago",
                        "required_deadLetterBlocksLaterMessagesOfItsKey",
                        "which is dead-lettered",
                        "optional_deadLetterBlocksItsKeyUntilReplayed",
                        "must replay 1, but your store replayed 0",
                        "optional_deadLetterBlocksItsKeyUntilDiscarded",
                        "must discard 1, but your store discarded 0"),
                defect(
                        "drops duplicate ids silently",
                        IgnoresDuplicates.class,
                        "required_duplicateIdIsRejected",
                        "accepted it silently",
                        "required_duplicateIdWithinOneBatchIsRejected",
                        "accepted it silently",
                        "optional_rejectedBatchLeavesNothingBehind",
                        "accepted it silently"),
                defect(
                        "drops duplicate ids silently in the single-message enqueue only",
                        SingleEnqueueIgnoresDuplicates.class,
                        "required_singleEnqueueIsClaimableAndRejectsADuplicate",
                        "enqueue (the single form) of a second message"),
                defect(
                        "leaves the messages before a duplicate in the caller's transaction",
                        LeavesHalfARejectedBatch.class,
                        "optional_rejectedBatchThatTheCallerCommitsLeavesNothingBehind",
                        "it left part of the rejected batch in the caller's transaction"),
                defect(
                        "forgets notBefore",
                        NotBeforeIgnored.class,
                        "required_delayedMessageIsNotClaimedBeforeNotBefore",
                        "10 minutes later",
                        "required_claimOrdersByAvailabilityThenEnqueueOrder",
                        "by availability (enqueue time",
                        "required_laterMessageWaitsWhileAnEarlierOneIsDelayed",
                        "which has notBefore=",
                        "required_pastNotBeforeKeepsItsPlace",
                        "an hour in the past, so it has been available since then and comes first"),
                defect(
                        "reports the receipt of a released or dead-lettered message live to extend",
                        ExtendReportsAFinishedLeaseLive.class,
                        "required_extendOfAFinishedLeaseExtendsNothing",
                        "of a released and of a dead-lettered message must report both stale, but your"
                                + " store reported []"),
                defect(
                        "moves a notBefore in the past to its enqueue time",
                        PastNotBeforeMovedToTheEnqueueTime.class,
                        "required_pastNotBeforeKeepsItsPlace",
                        "an hour in the past, so it has been available since then and comes first"),
                defect(
                        "stamps enqueue time with the first claim's now",
                        EnqueueTimeIsTheFirstClaimsNow.class,
                        "required_enqueueTimeIsTheAcceptanceTimeWhateverTheClaimTime",
                        "neither the claim's now nor the first claim's time is the enqueue time"),
                defect(
                        "reports the end of the lease as the enqueue time",
                        EnqueueTimeIsTheLeaseEnd.class,
                        "required_deliveryCarriesTheEnqueueTime",
                        "not a time of the claim or its lease",
                        "required_enqueueTimeIsTheAcceptanceTimeWhateverTheClaimTime",
                        "neither the claim's now nor the first claim's time is the enqueue time"),
                defect(
                        "keeps enqueue time in whole seconds",
                        EnqueueTimeInWholeSeconds.class,
                        "required_enqueueTimeIsTheAcceptanceTimeWhateverTheClaimTime",
                        "whole seconds lose the time a message waited"),
                defect(
                        "reports the claim time as the enqueue time",
                        EnqueueTimeIsTheClaimTime.class,
                        "required_deliveryCarriesTheEnqueueTime",
                        "never changes, but your store said"),
                defect(
                        "ignores keys",
                        IgnoresKeys.class,
                        "required_laterMessageWaitsWhileAnEarlierOneIsLeased",
                        "which is leased by tck-owner-a",
                        "required_laterMessageWaitsWhileAnEarlierOneWaitsForItsRetry",
                        "which waits for its retry",
                        "required_laterMessageWaitsWhileAnEarlierOneIsDelayed",
                        "which has notBefore=",
                        "required_deadLetterBlocksLaterMessagesOfItsKey",
                        "which is dead-lettered",
                        "optional_deadLetterBlocksItsKeyUntilReplayed",
                        "which is dead-lettered",
                        "optional_deadLetterBlocksItsKeyUntilDiscarded",
                        "which is dead-lettered",
                        "optional_deadLettersDoNotBlockWhenTheStoreIsBuiltSo",
                        "which is leased (whatever the option)",
                        "required_keyOrderIsEnqueueOrderNotIdOrOccurredAtOrder",
                        HELD_BACK,
                        "required_keyOrderHoldsAcrossOwnersAndStoreInstances",
                        "which is leased by tck-owner-a through store()",
                        "required_unkeyedAndOtherKeysAreNotHeldBack",
                        "only its own key is blocked",
                        "required_abandonedFollowerWaitsBehindItsReleasedHead",
                        "so the abandoned follower must wait too",
                        "required_concurrentClaimersKeepPerKeyOrder",
                        KEY_RACE),
                defect(
                        "holds a key back only while an earlier message is leased",
                        FencesOnLeasesOnly.class,
                        "required_laterMessageWaitsWhileAnEarlierOneWaitsForItsRetry",
                        "which waits for its retry",
                        "required_laterMessageWaitsWhileAnEarlierOneIsDelayed",
                        "which has notBefore=",
                        "required_deadLetterBlocksLaterMessagesOfItsKey",
                        "which is dead-lettered",
                        "optional_deadLetterBlocksItsKeyUntilReplayed",
                        "which is dead-lettered",
                        "optional_deadLetterBlocksItsKeyUntilDiscarded",
                        "which is dead-lettered",
                        "required_abandonedFollowerWaitsBehindItsReleasedHead",
                        "so the abandoned follower must wait too",
                        "required_concurrentClaimersKeepPerKeyOrder",
                        KEY_RACE),
                defect(
                        "lets dead letters not block their key by default",
                        DeadLettersDoNotBlock.class,
                        "required_deadLetterBlocksLaterMessagesOfItsKey",
                        "by default a dead letter blocks its key until it is replayed or discarded",
                        "optional_deadLetterBlocksItsKeyUntilReplayed",
                        "which is dead-lettered",
                        "optional_deadLetterBlocksItsKeyUntilDiscarded",
                        "which is dead-lettered"),
                defect(
                        "counts the attempt of an abandoned claim",
                        AbandonCountsTheAttempt.class,
                        "required_abandonTakesTheAttemptBack",
                        "abandon takes the attempt back, so the next claim is attempt 1 again",
                        "required_abandonedFollowerWaitsBehindItsReleasedHead",
                        "was claimed once and abandoned, so its next claim is attempt 1",
                        "required_abandonedReceiptIsStale",
                        "was claimed once and abandoned"),
                defect(
                        "puts an abandoned message behind the messages enqueued after it",
                        AbandonLosesItsPlace.class,
                        "required_abandonedMessageKeepsItsPlace",
                        "it is due at once, in its old place"),
                defect(
                        "extends by message id, whatever the owner or receipt",
                        ExtendsByMessageId.class,
                        "required_extendWithAStaleOrForeignReceiptExtendsNothing",
                        "must report both stale",
                        "required_sameOwnersOldReceiptCannotExtend",
                        SAME_OWNER),
                defect(
                        "checks the owner but not the receipt",
                        ChecksOwnerNotReceipt.class,
                        "required_sameOwnersOldReceiptCannotComplete",
                        SAME_OWNER,
                        "required_sameOwnersOldReceiptCannotRelease",
                        SAME_OWNER,
                        "required_sameOwnersOldReceiptCannotDeadLetter",
                        SAME_OWNER,
                        "required_sameOwnersOldReceiptCannotExtend",
                        SAME_OWNER,
                        "required_sameOwnersOldReceiptCannotAbandon",
                        SAME_OWNER));
    }

    @Test
    @DisplayName(
            "the forwarding wrapper without a defect passes every rule (the harness itself is sound)")
    void noDefect_passesEveryRule() {
        KitReport.of(NoDefect.class)
                .assertEveryRulePasses(
                        "store (defect-free wrapper)", ReferenceKitsTest.Kit.STORE.minimumRules);
    }

    @ParameterizedTest(
            name = "a store that {0} fails exactly the rules about it, with a readable message")
    @MethodSource("defects")
    void eachDefectFailsExactlyItsRules(
            String does, Class<? extends OutboxStoreContract> kit, Map<String, String> rules) {
        assertBreaksExactly(kit, rules);
    }

    @Test
    @DisplayName(
            "a store whose enqueue clock runs ahead of the tolerance fails with messages that name clockSkewTolerance()")
    void enqueueClockAhead_failuresNameTheTolerance() {
        KitReport report = KitReport.of(EnqueueClockAhead.class);
        assertThat(report.failed().keySet())
                .as("a clock 30 s ahead makes every fresh message look delayed")
                .contains(
                        "required_committedEnqueueIsClaimable",
                        "required_deliveryCarriesTheEnqueueTime",
                        "required_claimTakesTheOldestFirst",
                        "required_concurrentClaimersKeepPerKeyOrder")
                .hasSizeGreaterThan(40);
        report.failed()
                .forEach(
                        (rule, outcome) ->
                                assertThat(outcome.message())
                                        .as("the failure of %s must point at the knob", rule)
                                        .contains("clockSkewTolerance() = PT1S"));
    }

    @Test
    @DisplayName(
            "a store that loses its enqueues is not told to raise clockSkewTolerance(): its clock is not why")
    void losesCommittedEnqueues_failuresDoNotBlameTheClock() {
        KitReport report = KitReport.of(LosesCommittedEnqueues.class);
        assertThat(report.failed().keySet())
                .as("nothing is ever claimable")
                .contains(
                        "required_committedEnqueueIsClaimable", "required_claimTakesTheOldestFirst")
                .hasSizeGreaterThan(40);
        assertThat(report.failed().get("required_committedEnqueueIsClaimable").message())
                .contains("but your store returned []");
        report.failed()
                .forEach(
                        (rule, outcome) ->
                                assertThat(outcome.message())
                                        .as(
                                                "the failure of %s must not blame the store's clock",
                                                rule)
                                        .doesNotContain("raise clockSkewTolerance()"));
    }

    @Test
    @DisplayName("the table above covers every broken store declared in this class")
    void everyBrokenStoreIsChecked() {
        Set<Class<?>> checked =
                defects().map(a -> (Class<?>) a.get()[1]).collect(Collectors.toSet());
        checked.add(EnqueueClockAhead.class);
        checked.add(LosesCommittedEnqueues.class);
        Set<Class<?>> declared =
                Stream.of(BrokenStoresTest.class.getDeclaredClasses())
                        .filter(BrokenStoreContract.class::isAssignableFrom)
                        .filter(c -> !Modifier.isAbstract(c.getModifiers()))
                        .filter(c -> c != NoDefect.class)
                        .collect(Collectors.toSet());
        assertThat(checked).containsExactlyInAnyOrderElementsOf(declared);
    }
}
