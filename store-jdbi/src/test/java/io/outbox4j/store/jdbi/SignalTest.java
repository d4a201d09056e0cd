package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The writing side's coalescing of wake-up signals, on its own (no database needed). */
class SignalTest {
    @Test
    void signalsAskedForWhileOneIsBeingSent_giveExactlyOneMoreSend() throws InterruptedException {
        CountDownLatch firstStarted = new CountDownLatch(1);
        CountDownLatch releaseFirst = new CountDownLatch(1);
        Semaphore sent = new Semaphore(0);
        AtomicInteger sends = new AtomicInteger();
        Signal signal =
                new Signal(
                        () -> {
                            if (sends.incrementAndGet() == 1) {
                                firstStarted.countDown();
                                await(releaseFirst);
                            }
                            sent.release();
                        },
                        "signal-test");

        signal.now();
        assertThat(firstStarted.await(5, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < 1000; i++) {
            signal.now(); // commits while the first send runs
        }
        releaseFirst.countDown();

        assertThat(sent.tryAcquire(2, 5, TimeUnit.SECONDS)).as("two sends").isTrue();
        // A third send would be for a commit after the second started; there was none. Another
        // signal now proves the thread is free again, and is the third send.
        signal.now();
        assertThat(sent.tryAcquire(1, 5, TimeUnit.SECONDS)).isTrue();
        assertThat(sends.get()).isEqualTo(3);
    }

    @Test
    void unsureEnqueues_shareOneChainOfFollowUpSends_thatBacksOffAndEndsASecondAfterTheLast()
            throws InterruptedException {
        List<Long> sends = new CopyOnWriteArrayList<>();
        Signal signal = new Signal(() -> sends.add(System.nanoTime()), "signal-test-unsure");
        long start = System.nanoTime();
        for (int i = 0; i < 1000; i++) {
            signal.unsure(); // a burst of enqueues through plain JDBC connections
        }
        assertThat(signal.followingUp()).isTrue();
        Awaitility.await("the chain ends")
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> !signal.followingUp());
        long first = TimeUnit.NANOSECONDS.toMillis(sends.get(0) - start);
        long last = TimeUnit.NANOSECONDS.toMillis(sends.get(sends.size() - 1) - start);
        assertThat(first).as("first send, ms after the burst").isBetween(4L, 200L);
        assertThat(last).as("last send, ms after the burst").isBetween(500L, 3000L);
        // Backing off (5, 10, 20, 40 ... ms): about ten sends for a thousand enqueues.
        assertThat(sends).as("sends for 1000 enqueues").hasSizeBetween(5, 14);
    }

    @Test
    void aFailingSend_isLogged_andTheNextSignalStillSends() throws InterruptedException {
        Semaphore tried = new Semaphore(0);
        AtomicInteger tries = new AtomicInteger();
        Signal signal =
                new Signal(
                        () -> {
                            tried.release();
                            if (tries.incrementAndGet() == 1) {
                                throw new IllegalStateException("database down");
                            }
                        },
                        "signal-test-failing");
        signal.now();
        assertThat(tried.tryAcquire(5, TimeUnit.SECONDS)).isTrue();
        signal.now();
        assertThat(tried.tryAcquire(5, TimeUnit.SECONDS)).as("tried again").isTrue();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
