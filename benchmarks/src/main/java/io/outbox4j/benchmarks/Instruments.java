package io.outbox4j.benchmarks;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The probes the scenarios attach to the relay: a no-op publisher, a counting observer, a timing
 * store.
 */
final class Instruments {
    private Instruments() {}

    /** Publishes nothing and reports every message as published: the relay's ceiling. */
    static final class NoopPublisher implements Publisher {
        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            return Collections.nCopies(messages.size(), PublishOutcome.published());
        }
    }

    /**
     * Records, per message id, when the wrapped publisher returned it as published (the broker's
     * ack), and times each publisher call.
     */
    static final class AckClock implements Publisher {
        private final Publisher delegate;
        final Map<String, Long> ackedAt = new ConcurrentHashMap<>();
        final Map<String, Long> publishStartedAt = new ConcurrentHashMap<>();
        final Timings calls = new Timings();

        AckClock(Publisher delegate) {
            this.delegate = delegate;
        }

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            long t0 = System.nanoTime();
            for (Message m : messages) {
                publishStartedAt.putIfAbsent(m.id(), t0);
            }
            List<PublishOutcome> outcomes = delegate.publish(messages, timeout);
            long now = System.nanoTime();
            calls.add(now - t0);
            for (int i = 0; i < messages.size(); i++) {
                if (outcomes.get(i).isPublished()) {
                    ackedAt.putIfAbsent(messages.get(i).id(), now);
                }
            }
            return outcomes;
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    /**
     * Counts what became of each delivery and lets a scenario wait for a number of completions. The
     * waiting thread sleeps on a latch (no polling: on a 2-core machine a polling waiter would
     * steal CPU from the relay it measures); the time of the target completion is taken inside the
     * observer call that reached it.
     */
    static final class Counter implements Observer {
        private final LongAdder completed = new LongAdder();
        private final LongAdder other = new LongAdder();
        private final LongAdder storeErrors = new LongAdder();
        private final AtomicReference<String> firstProblem = new AtomicReference<>();
        private final AtomicLong reachedAt = new AtomicLong();
        private volatile long target = Long.MAX_VALUE;
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch troubled = new CountDownLatch(1);

        @Override
        public void onDelivery(Observation o) {
            if (o.outcome() == Observation.Outcome.COMPLETED) {
                completed.increment();
                if (completed.sum() >= target && reachedAt.compareAndSet(0, System.nanoTime())) {
                    reached.countDown();
                }
            } else {
                other.increment();
                firstProblem.compareAndSet(
                        null, o.outcome() + " " + o.error().map(Throwable::toString).orElse(""));
                if (other.sum() > 100) {
                    troubled.countDown();
                }
            }
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.increment();
            firstProblem.compareAndSet(null, "store error " + error);
            if (storeErrors.sum() > 100) {
                troubled.countDown();
            }
        }

        long completed() {
            return completed.sum();
        }

        /**
         * Sets how many completions {@link #await} waits for; call before the relay starts.
         *
         * @param n how many
         * @return this counter
         */
        Counter expect(long n) {
            target = n;
            if (completed.sum() >= n && reachedAt.compareAndSet(0, System.nanoTime())) {
                reached.countDown();
            }
            return this;
        }

        /**
         * Waits until the expected number of deliveries completed.
         *
         * @param timeout the longest wait
         * @return the nanoTime when the expected completion was observed
         * @throws IllegalStateException on timeout or when deliveries keep doing anything but
         *     complete
         */
        long await(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            try {
                while (!reached.await(100, TimeUnit.MILLISECONDS)) {
                    if (troubled.getCount() == 0) {
                        throw new IllegalStateException(
                                "relay is not completing deliveries: " + firstProblem.get());
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(
                                "only "
                                        + completed.sum()
                                        + " of "
                                        + target
                                        + " deliveries completed within "
                                        + timeout
                                        + (firstProblem.get() == null
                                                ? ""
                                                : "; first problem: " + firstProblem.get()));
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            return reachedAt.get();
        }

        String problems() {
            long o = other.sum();
            long e = storeErrors.sum();
            return o + e == 0
                    ? null
                    : o
                            + " deliveries not completed, "
                            + e
                            + " store errors; first: "
                            + firstProblem.get();
        }
    }

    /**
     * Wraps a store and times each claim and complete call (one SQL statement each for a good
     * store); optionally notes, per message id, when the claim that returned it started and ended.
     */
    static final class TimedStore implements OutboxStore {
        private final OutboxStore delegate;
        final Timings claims = new Timings();
        final Timings completes = new Timings();

        /** id → {claim started, claim returned} (nanoTime), when {@link #perMessage} is set. */
        final Map<String, long[]> claimedAt = new ConcurrentHashMap<>();

        private final boolean perMessage;

        TimedStore(OutboxStore delegate) {
            this(delegate, false);
        }

        TimedStore(OutboxStore delegate, boolean perMessage) {
            this.delegate = delegate;
            this.perMessage = perMessage;
        }

        @Override
        public List<Delivery> claim(ClaimRequest request) {
            long t0 = System.nanoTime();
            List<Delivery> d = delegate.claim(request);
            long t1 = System.nanoTime();
            claims.add(t1 - t0);
            if (perMessage) {
                for (Delivery delivery : d) {
                    claimedAt.putIfAbsent(delivery.message().id(), new long[] {t0, t1});
                }
            }
            return d;
        }

        @Override
        public Set<String> complete(Completion completion) {
            long t0 = System.nanoTime();
            Set<String> stale = delegate.complete(completion);
            completes.add(System.nanoTime() - t0);
            return stale;
        }

        @Override
        public boolean release(Release release) {
            return delegate.release(release);
        }

        @Override
        public boolean deadLetter(DeadLetter deadLetter) {
            return delegate.deadLetter(deadLetter);
        }

        @Override
        public Set<String> extend(Extension extension) {
            return delegate.extend(extension);
        }

        @Override
        public Set<String> abandon(Abandonment abandonment) {
            return delegate.abandon(abandonment);
        }
    }

    static void sleepMicros(long micros) {
        try {
            TimeUnit.MICROSECONDS.sleep(micros);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
