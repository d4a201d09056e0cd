package io.outbox4j.tck;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.stream.Collectors;

/**
 * Forwards every call to the reference store and remembers, per message, who holds its latest
 * lease, so that a broken store can bend exactly one rule. Every method is synchronized: the broken
 * behaviour must not be blamed on a race in the wrapper.
 */
class ForwardingStore implements OutboxStore {
    /** The latest lease handed out for a message, the time it was claimed at and its end. */
    record Lease(String owner, Delivery delivery, Instant at, Instant until) {}

    final OutboxStore delegate;

    /** message id → latest lease the wrapper saw the reference store hand out. */
    final Map<String, Lease> latest = new HashMap<>();

    /** receipt → message id, for every receipt ever handed out. */
    final Map<String, String> idOfReceipt = new HashMap<>();

    ForwardingStore(OutboxStore delegate) {
        this.delegate = delegate;
    }

    /**
     * A store whose claims pass every delivery through {@code change}, which also gets the claim
     * request that handed it out.
     */
    static ForwardingStore changingClaims(
            OutboxStore store, BiFunction<ClaimRequest, Delivery, Delivery> change) {
        return new ForwardingStore(store) {
            @Override
            public synchronized List<Delivery> claim(ClaimRequest r) {
                return super.claim(r).stream()
                        .map(d -> change.apply(r, d))
                        .collect(Collectors.toList());
            }
        };
    }

    /** {@code d} reporting {@code attempt} as its attempt. */
    static Delivery withAttempt(Delivery d, int attempt) {
        return new Delivery(d.message(), d.receipt(), attempt, d.enqueuedAt());
    }

    /** {@code d} reporting {@code enqueuedAt} as its enqueue time. */
    static Delivery withEnqueuedAt(Delivery d, Instant enqueuedAt) {
        return new Delivery(d.message(), d.receipt(), d.attempt(), enqueuedAt);
    }

    @Override
    public synchronized List<Delivery> claim(ClaimRequest request) {
        List<Delivery> got = delegate.claim(request);
        for (Delivery d : got) {
            latest.put(
                    d.message().id(),
                    new Lease(request.owner(), d, request.now(), request.leaseUntil()));
            idOfReceipt.put(d.receipt(), d.message().id());
        }
        return got;
    }

    @Override
    public synchronized Set<String> complete(Completion completion) {
        return finishedBut(delegate.complete(completion), completion.receipts());
    }

    @Override
    public synchronized boolean release(Release release) {
        return finishedIf(delegate.release(release), release.receipt());
    }

    @Override
    public synchronized boolean deadLetter(DeadLetter deadLetter) {
        return finishedIf(delegate.deadLetter(deadLetter), deadLetter.receipt());
    }

    @Override
    public synchronized Set<String> extend(Extension extension) {
        Set<String> stale = delegate.extend(extension);
        for (String receipt : extension.receipts()) {
            String id = idOfReceipt.get(receipt);
            Lease l = id == null ? null : latest.get(id);
            if (!stale.contains(receipt) && l != null && l.delivery().receipt().equals(receipt)) {
                latest.put(id, new Lease(l.owner(), l.delivery(), l.at(), extension.until()));
            }
        }
        return stale;
    }

    @Override
    public synchronized Set<String> abandon(Abandonment abandonment) {
        return finishedBut(delegate.abandon(abandonment), abandonment.receipts());
    }

    /** Forgets the lease behind {@code receipt} if {@code done}; returns {@code done}. */
    private boolean finishedIf(boolean done, String receipt) {
        if (done) {
            finished(receipt);
        }
        return done;
    }

    /** Forgets the leases behind every receipt that {@code stale} leaves out; returns it. */
    private Set<String> finishedBut(Set<String> stale, List<String> receipts) {
        receipts.stream().filter(r -> !stale.contains(r)).forEach(this::finished);
        return stale;
    }

    /**
     * Forgets the lease behind a receipt that was completed, released, dead-lettered or abandoned.
     */
    void finished(String receipt) {
        String id = idOfReceipt.get(receipt);
        if (id != null
                && latest.containsKey(id)
                && latest.get(id).delivery().receipt().equals(receipt)) {
            latest.remove(id);
        }
    }
}
