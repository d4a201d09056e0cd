package io.outbox4j.engine;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps a store and records every call made through it: claim requests, completion calls, the ids
 * each successful completion removed, releases and dead letters. Subclass it to inject failures.
 */
class RecordingStore implements OutboxStore {
    final OutboxStore delegate;
    final List<ClaimRequest> claims = new CopyOnWriteArrayList<>();
    final List<Completion> completions = new CopyOnWriteArrayList<>();
    final List<Release> releases = new CopyOnWriteArrayList<>();
    final List<DeadLetter> deadLetters = new CopyOnWriteArrayList<>();

    /** Message id → how many times a completion of it succeeded. */
    final Map<String, AtomicInteger> completedPerId = new ConcurrentHashMap<>();

    private final Map<String, String> idByReceipt = new ConcurrentHashMap<>();

    RecordingStore(OutboxStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        claims.add(request);
        List<Delivery> claimed = delegate.claim(request);
        for (Delivery d : claimed) {
            idByReceipt.put(d.receipt(), d.message().id());
        }
        return claimed;
    }

    @Override
    public Set<String> complete(Completion completion) {
        completions.add(completion);
        Set<String> stale = delegate.complete(completion);
        for (String receipt : completion.receipts()) {
            if (!stale.contains(receipt)) {
                completedPerId
                        .computeIfAbsent(idByReceipt.get(receipt), k -> new AtomicInteger())
                        .incrementAndGet();
            }
        }
        return stale;
    }

    @Override
    public boolean release(Release release) {
        releases.add(release);
        return delegate.release(release);
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        deadLetters.add(deadLetter);
        return delegate.deadLetter(deadLetter);
    }

    String idOf(String receipt) {
        return idByReceipt.get(receipt);
    }
}
