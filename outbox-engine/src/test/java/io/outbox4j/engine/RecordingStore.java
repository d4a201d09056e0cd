package io.outbox4j.engine;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps a store and records every call made through it: claim requests (with the {@code nanoTime}
 * each returned), completions, the ids each successful completion removed, releases, dead letters,
 * extensions and abandonments, and the leases held through it. {@link #failing} makes a call fail;
 * subclass it for anything else.
 */
class RecordingStore implements OutboxStore {
    /** The store calls {@link #failing} can make fail. */
    enum Call {
        CLAIM,
        COMPLETE,
        RELEASE,
        EXTEND,
        ABANDON
    }

    final OutboxStore delegate;
    final List<ClaimRequest> claims = new CopyOnWriteArrayList<>();

    /** {@code System.nanoTime()} when each claim returned or threw, in order. */
    final List<Long> claimReturnedNanos = new CopyOnWriteArrayList<>();

    /** How many messages each claim returned (0 when it threw), in the same order. */
    final List<Integer> claimedCounts = new CopyOnWriteArrayList<>();

    final List<Completion> completions = new CopyOnWriteArrayList<>();
    final List<Release> releases = new CopyOnWriteArrayList<>();
    final List<DeadLetter> deadLetters = new CopyOnWriteArrayList<>();
    final List<Extension> extensions = new CopyOnWriteArrayList<>();
    final List<Abandonment> abandonments = new CopyOnWriteArrayList<>();

    /** Message id → how many times a completion of it succeeded. */
    final Map<String, AtomicInteger> completedPerId = new ConcurrentHashMap<>();

    /** The leases held through this store: claimed, minus written back once the write returned. */
    final AtomicInteger held = new AtomicInteger();

    /** The most leases {@link #held} at once. */
    final AtomicInteger maxHeld = new AtomicInteger();

    private final Map<Call, RuntimeException> failures = new ConcurrentHashMap<>();

    private final Map<String, String> idByReceipt = new ConcurrentHashMap<>();
    private final Object claimSignal = new Object();

    RecordingStore(OutboxStore delegate) {
        this.delegate = delegate;
    }

    /**
     * Makes every later {@code call} fail: it is recorded, then {@code error} is thrown instead of
     * reaching the store.
     *
     * @return this store
     */
    RecordingStore failing(Call call, RuntimeException error) {
        failures.put(call, error);
        return this;
    }

    private void failIfAsked(Call call) {
        RuntimeException error = failures.get(call);
        if (error != null) {
            throw error;
        }
    }

    private <T> T givenBack(int leases, T answer) {
        held.addAndGet(-leases);
        return answer;
    }

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        claims.add(request);
        int count = 0;
        try {
            failIfAsked(Call.CLAIM);
            List<Delivery> claimed = delegate.claim(request);
            for (Delivery d : claimed) {
                idByReceipt.put(d.receipt(), d.message().id());
            }
            count = claimed.size();
            maxHeld.accumulateAndGet(held.addAndGet(count), Math::max);
            return claimed;
        } finally {
            synchronized (claimSignal) {
                claimedCounts.add(count);
                claimReturnedNanos.add(System.nanoTime());
                claimSignal.notifyAll();
            }
        }
    }

    /** Waits (on a monitor, not by polling) until {@code n} claims have returned or thrown. */
    void awaitClaims(int n, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        synchronized (claimSignal) {
            while (claimReturnedNanos.size() < n) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError(
                            "timed out after "
                                    + within
                                    + " waiting for "
                                    + n
                                    + " claims; saw "
                                    + claimReturnedNanos.size());
                }
                claimSignal.wait(Math.max(1, left / 1_000_000));
            }
        }
    }

    @Override
    public Set<String> complete(Completion completion) {
        completions.add(completion);
        failIfAsked(Call.COMPLETE);
        Set<String> stale = delegate.complete(completion);
        for (String receipt : completion.receipts()) {
            if (!stale.contains(receipt)) {
                completedPerId
                        .computeIfAbsent(idByReceipt.get(receipt), k -> new AtomicInteger())
                        .incrementAndGet();
            }
        }
        return givenBack(completion.receipts().size(), stale);
    }

    @Override
    public boolean release(Release release) {
        releases.add(release);
        failIfAsked(Call.RELEASE);
        return givenBack(1, delegate.release(release));
    }

    @Override
    public Set<String> extend(Extension extension) {
        extensions.add(extension);
        failIfAsked(Call.EXTEND);
        return delegate.extend(extension);
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        deadLetters.add(deadLetter);
        return givenBack(1, delegate.deadLetter(deadLetter));
    }

    @Override
    public Set<String> abandon(Abandonment abandonment) {
        abandonments.add(abandonment);
        failIfAsked(Call.ABANDON);
        return givenBack(abandonment.receipts().size(), delegate.abandon(abandonment));
    }

    String idOf(String receipt) {
        return idByReceipt.get(receipt);
    }

    List<String> idsOf(List<String> receipts) {
        return receipts.stream().map(this::idOf).toList();
    }
}
