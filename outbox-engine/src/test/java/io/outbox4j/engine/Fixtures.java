package io.outbox4j.engine;

import io.outbox4j.api.Message;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.PublishOutcome;
import io.outbox4j.api.Publisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;

/** Small helpers shared by the engine tests. */
final class Fixtures {
    private Fixtures() {}

    static Message message(String id) {
        return message(id, null);
    }

    static Message message(String id, String key) {
        Message.Builder b =
                Message.builder()
                        .id(id)
                        .topic("orders.created")
                        .module("orders")
                        .payload("payload-" + id);
        if (key != null) {
            b.key(key);
        }
        return b.build();
    }

    static List<Message> messages(String prefix, int n) {
        List<Message> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(message(prefix + i));
        }
        return list;
    }

    /**
     * Polls {@code condition} every few milliseconds; fails with {@code what} if it is not true
     * within {@code within}.
     */
    static void await(String what, Duration within, BooleanSupplier condition) {
        Awaitility.await(what)
                .dontCatchUncaughtExceptions() // tests make relay threads die on purpose
                .atMost(within)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(2))
                .until(condition::getAsBoolean);
    }

    /**
     * Counts {@code entered} down, then waits up to 10 s for {@code gate} to open: what a publisher
     * call that the test holds does. An interrupt ends the wait and stays set on the thread.
     */
    static void enterThenAwait(CountDownLatch entered, CountDownLatch gate) {
        entered.countDown();
        awaitOpen(gate);
    }

    /** Waits up to 10 s for {@code gate} to open; an interrupt ends the wait and stays set. */
    static void awaitOpen(CountDownLatch gate) {
        try {
            gate.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The loop thread of the relay with this owner, once it exists. */
    static Thread relayThread(String owner) {
        String name = "outbox4j-relay-" + owner;
        Thread[] found = new Thread[1];
        await(
                "thread " + name + " exists",
                Duration.ofSeconds(5),
                () -> {
                    for (Thread t : Thread.getAllStackTraces().keySet()) {
                        if (t.getName().equals(name)) {
                            found[0] = t;
                            return true;
                        }
                    }
                    return false;
                });
        return found[0];
    }

    /**
     * {@link Relay#runOnce()} on a caller thread of its own, started at once: what it returned, and
     * whether that thread's interrupt flag was set when it returned.
     */
    static final class Caller {
        final Thread thread;
        private volatile Relay.@Nullable Result result;
        private volatile @Nullable Boolean interruptedAfter;

        Caller(Relay relay) {
            thread =
                    new Thread(
                            () -> {
                                result = relay.runOnce();
                                interruptedAfter = Thread.currentThread().isInterrupted();
                            });
            thread.start();
        }

        /** Waits up to 5 s for runOnce() to return; fails if it has not. */
        Caller awaitReturned() throws InterruptedException {
            thread.join(5_000);
            if (thread.isAlive()) {
                throw new AssertionError("runOnce() has not returned within 5 s");
            }
            return this;
        }

        Relay.@Nullable Result result() {
            return result;
        }

        /** Whether the interrupt flag was set when runOnce() returned; null if it threw. */
        @Nullable Boolean interruptedAfter() {
            return interruptedAfter;
        }
    }

    static List<String> ids(List<Message> messages) {
        return messages.stream().map(Message::id).toList();
    }

    /** A publisher that decides each message's outcome with a function and records every call. */
    static final class ScriptedPublisher implements Publisher {
        final List<List<String>> calls = new CopyOnWriteArrayList<>();
        private final Function<Message, PublishOutcome> outcome;

        ScriptedPublisher(Function<Message, PublishOutcome> outcome) {
            this.outcome = outcome;
        }

        static ScriptedPublisher accepting() {
            return new ScriptedPublisher(m -> PublishOutcome.published());
        }

        /**
         * Publishes every message once the test lets it: each first counts {@code entered} down and
         * waits (up to 10 s) for {@code gate} to open.
         */
        static ScriptedPublisher held(CountDownLatch entered, CountDownLatch gate) {
            return new ScriptedPublisher(
                    m -> {
                        enterThenAwait(entered, gate);
                        return PublishOutcome.published();
                    });
        }

        /** Publishes every message, each taking {@code each} by {@code clock}. */
        static ScriptedPublisher taking(MutableClock clock, Duration each) {
            return new ScriptedPublisher(
                    m -> {
                        clock.advance(each);
                        return PublishOutcome.published();
                    });
        }

        /**
         * Publishes every message but those whose id {@code fails} accepts: their calls fail
         * retryably ("nack").
         */
        static ScriptedPublisher failing(Predicate<String> fails) {
            return new ScriptedPublisher(
                    m ->
                            fails.test(m.id())
                                    ? PublishOutcome.failed(new IllegalStateException("nack"))
                                    : PublishOutcome.published());
        }

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            calls.add(ids(messages));
            return messages.stream().map(outcome).toList();
        }

        List<String> publishedIdsInOrder() {
            return calls.stream().flatMap(List::stream).toList();
        }
    }

    /**
     * A publisher whose calls hang for 30 seconds unless interrupted (then it answers "published",
     * as a careless adapter would). {@code entered} opens on the first call; {@code interrupted}
     * tells whether a call was interrupted.
     */
    static final class HangingPublisher implements Publisher {
        final CountDownLatch entered = new CountDownLatch(1);
        final AtomicBoolean interrupted = new AtomicBoolean();

        @Override
        public List<PublishOutcome> publish(List<Message> messages, Duration timeout) {
            entered.countDown();
            try {
                Thread.sleep(30_000);
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
            return messages.stream().map(m -> PublishOutcome.published()).toList();
        }

        void awaitEntered() throws InterruptedException {
            if (!entered.await(5, TimeUnit.SECONDS)) {
                throw new AssertionError("the publisher was never called");
            }
        }
    }

    /** Collects observations and store errors. */
    static final class RecordingObserver implements Observer {
        final List<Observation> deliveries = new CopyOnWriteArrayList<>();
        final List<Throwable> storeErrors = new CopyOnWriteArrayList<>();

        @Override
        public void onDelivery(Observation observation) {
            deliveries.add(observation);
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.add(error);
        }

        List<Observation.Outcome> outcomes() {
            return deliveries.stream().map(Observation::outcome).toList();
        }
    }
}
