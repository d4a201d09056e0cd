package io.outbox4j.benchmarks;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/** The probes the scenarios attach to the relay: a no-op publisher, a counting observer, a timing store. */
final class Instruments {
    private Instruments() {
    }

    /** Publishes nothing and reports every message as published: the relay's ceiling. */
    static final class NoopPublisher implements Publisher {
        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            return Collections.nCopies(messages.size(), PublishOutcome.published());
        }
    }

    /** Records, per message id, when the wrapped publisher returned it as published (the broker's ack). */
    static final class AckClock implements Publisher {
        private final Publisher delegate;
        final Map<String, Long> ackedAt = new ConcurrentHashMap<>();

        AckClock(Publisher delegate) {
            this.delegate = delegate;
        }

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            List<PublishOutcome> outcomes = delegate.publish(messages, timeout);
            long now = System.nanoTime();
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

    /** Counts what became of each delivery and lets a scenario wait for a number of completions. */
    static final class Counter implements Observer {
        private final LongAdder completed = new LongAdder();
        private final LongAdder other = new LongAdder();
        private final LongAdder storeErrors = new LongAdder();
        private final AtomicReference<String> firstProblem = new AtomicReference<>();

        @Override
        public void onDelivery(Observation o) {
            if (o.outcome() == Observation.Outcome.COMPLETED) {
                completed.increment();
            } else {
                other.increment();
                firstProblem.compareAndSet(null, o.outcome() + " " + o.error().map(Throwable::toString).orElse(""));
            }
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.increment();
            firstProblem.compareAndSet(null, "store error " + error);
        }

        long completed() {
            return completed.sum();
        }

        /**
         * Waits until {@code n} deliveries completed.
         *
         * @param n how many
         * @param timeout the longest wait
         * @return the nanoTime when the n-th completion was seen
         * @throws IllegalStateException on timeout or when a delivery did anything but complete
         */
        long await(long n, Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                long c = completed.sum();
                long now = System.nanoTime();
                if (c >= n) {
                    return now;
                }
                if (firstProblem.get() != null && other.sum() + storeErrors.sum() > 100) {
                    throw new IllegalStateException("relay is not completing deliveries: " + firstProblem.get());
                }
                if (now > deadline) {
                    throw new IllegalStateException("only " + c + " of " + n + " deliveries completed within "
                            + timeout + (firstProblem.get() == null ? "" : "; first problem: " + firstProblem.get()));
                }
                sleepMicros(200);
            }
        }

        String problems() {
            long o = other.sum();
            long e = storeErrors.sum();
            return o + e == 0 ? null : o + " deliveries not completed, " + e + " store errors; first: " + firstProblem.get();
        }
    }

    /** Wraps a store and times each claim and complete call (one SQL statement each for a good store). */
    static final class TimedStore implements OutboxStore {
        private final OutboxStore delegate;
        final Timings claims = new Timings();
        final Timings completes = new Timings();

        TimedStore(OutboxStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public List<Delivery> claim(ClaimRequest request) {
            long t0 = System.nanoTime();
            List<Delivery> d = delegate.claim(request);
            claims.add(System.nanoTime() - t0);
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
