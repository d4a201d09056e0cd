package io.outbox4j.engine;

import io.outbox4j.api.Message;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A publisher that records which keys are in flight and reports every overlap: a key handed to two
 * concurrent calls, or twice to one call. Several instances may share a {@code global} tracker to
 * see overlaps across relays. Each call takes {@code workNanos} and fails a message with
 * probability {@code failureRate} on its first attempt.
 */
final class KeyTrackingPublisher implements Publisher {
    final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    final List<String> overlaps = new CopyOnWriteArrayList<>();
    final Map<String, AtomicInteger> publishedPerId;
    final AtomicInteger concurrentCalls = new AtomicInteger();
    final AtomicInteger maxConcurrentCalls = new AtomicInteger();
    final AtomicInteger calls = new AtomicInteger();

    /** Message ids in the order they were first published (shared with {@code global}). */
    final List<String> firstPublished = new CopyOnWriteArrayList<>();

    private final KeyTrackingPublisher global;
    private final long workNanos;
    private final double failureRate;
    private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

    KeyTrackingPublisher(
            long workNanos,
            double failureRate,
            KeyTrackingPublisher global,
            Map<String, AtomicInteger> publishedPerId) {
        this.workNanos = workNanos;
        this.failureRate = failureRate;
        this.global = global;
        this.publishedPerId = publishedPerId;
    }

    KeyTrackingPublisher(long workNanos) {
        this(workNanos, 0, null, new ConcurrentHashMap<>());
    }

    @Override
    public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
        calls.incrementAndGet();
        int now = concurrentCalls.incrementAndGet();
        maxConcurrentCalls.accumulateAndGet(now, Math::max);
        Set<String> keys = new HashSet<>();
        for (Message m : messages) {
            m.key()
                    .ifPresent(
                            k -> {
                                if (!keys.add(k)) {
                                    overlaps.add(k + " twice in one call");
                                }
                            });
        }
        enter(keys);
        try {
            LockSupport.parkNanos(workNanos);
            return messages.stream()
                    .map(
                            m -> {
                                if (failureRate > 0
                                        && !failedOnce.contains(m.id())
                                        && ThreadLocalRandom.current().nextDouble() < failureRate) {
                                    failedOnce.add(m.id());
                                    return PublishOutcome.failed(
                                            new IllegalStateException("injected failure"));
                                }
                                int times =
                                        publishedPerId
                                                .computeIfAbsent(m.id(), id -> new AtomicInteger())
                                                .incrementAndGet();
                                if (times == 1) {
                                    firstPublished.add(m.id());
                                    if (global != null) {
                                        global.firstPublished.add(m.id());
                                    }
                                }
                                return PublishOutcome.published();
                            })
                    .toList();
        } finally {
            leave(keys);
            concurrentCalls.decrementAndGet();
        }
    }

    private void enter(Set<String> keys) {
        for (String k : keys) {
            if (inFlight.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet() > 1) {
                overlaps.add(k + " in concurrent calls");
            }
        }
        if (global != null) {
            global.enter(keys);
        }
    }

    private void leave(Set<String> keys) {
        for (String k : keys) {
            inFlight.get(k).decrementAndGet();
        }
        if (global != null) {
            global.leave(keys);
        }
    }
}
