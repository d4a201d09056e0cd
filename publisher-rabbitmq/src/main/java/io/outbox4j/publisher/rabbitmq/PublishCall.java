package io.outbox4j.publisher.rabbitmq;

import io.outbox4j.api.PublishOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * One {@code publish} call: one outcome slot per message, set exactly once by whoever decides first
 * (a confirm, a nack, a channel shutdown, the worker on an error, or the caller at the deadline),
 * and the hand-over of the channel between the worker thread that writes and the caller that waits.
 */
final class PublishCall {
    private static final int WRITING = 0;
    private static final int WRITTEN = 1;
    private static final int ABANDONED = 2;

    private final AtomicReferenceArray<PublishOutcome> outcomes;
    private final CountDownLatch undecided;
    private final AtomicInteger state = new AtomicInteger(WRITING);
    private volatile String stage = "waiting for a publishing thread";

    /**
     * Written by the worker before {@link #markWritten()}, read by the caller after a failed {@link
     * #abandon()}.
     */
    private @Nullable ConfirmChannel channel;

    private boolean channelBroken;

    PublishCall(int size) {
        this.outcomes = new AtomicReferenceArray<>(size);
        this.undecided = new CountDownLatch(size);
    }

    int size() {
        return outcomes.length();
    }

    /**
     * Sets the outcome of message {@code index} unless it is already decided; returns whether it
     * was set.
     */
    boolean decide(int index, PublishOutcome outcome) {
        if (outcomes.compareAndSet(index, null, outcome)) {
            undecided.countDown();
            return true;
        }
        return false;
    }

    boolean isDecided(int index) {
        return outcomes.get(index) != null;
    }

    /** Fails every message whose outcome is not decided yet. */
    void failUndecided(Throwable cause) {
        PublishOutcome failed = PublishOutcome.failed(cause);
        for (int i = 0; i < outcomes.length(); i++) {
            decide(i, failed);
        }
    }

    boolean allDecided() {
        return undecided.getCount() == 0;
    }

    /**
     * Waits until every outcome is decided or the deadline passes; returns whether all were
     * decided.
     */
    boolean await(long deadlineNanos) throws InterruptedException {
        long remaining = deadlineNanos - System.nanoTime();
        return undecided.await(Math.max(0, remaining), TimeUnit.NANOSECONDS);
    }

    void stage(String stage) {
        this.stage = stage;
    }

    String stage() {
        return stage;
    }

    /**
     * The worker records the channel it used and whether it failed, just before {@link
     * #markWritten()}.
     */
    void handOver(@Nullable ConfirmChannel channel, boolean broken) {
        this.channel = channel;
        this.channelBroken = broken;
    }

    @Nullable ConfirmChannel channel() {
        return channel;
    }

    boolean channelBroken() {
        return channelBroken;
    }

    /**
     * The worker finished writing; returns false if the caller already gave up (the worker then
     * owns cleanup).
     */
    boolean markWritten() {
        return state.compareAndSet(WRITING, WRITTEN);
    }

    /**
     * The caller gives up; returns false if the worker had already finished writing (the caller
     * owns cleanup).
     */
    boolean abandon() {
        return state.compareAndSet(WRITING, ABANDONED);
    }

    boolean abandoned() {
        return state.get() == ABANDONED;
    }

    List<PublishOutcome> outcomes() {
        List<PublishOutcome> list = new ArrayList<>(outcomes.length());
        for (int i = 0; i < outcomes.length(); i++) {
            list.add(outcomes.get(i));
        }
        return list;
    }
}
