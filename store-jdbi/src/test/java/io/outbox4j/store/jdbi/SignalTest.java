package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
    void unsureEnqueues_sendAtFiveFiftyAndFiveHundredMillis_onceForAWindow()
            throws InterruptedException {
        Semaphore sent = new Semaphore(0);
        AtomicInteger sends = new AtomicInteger();
        Signal signal =
                new Signal(
                        () -> {
                            sends.incrementAndGet();
                            sent.release();
                        },
                        "signal-test-unsure");
        long start = System.nanoTime();
        signal.unsure();
        signal.unsure(); // same window: no sends of its own

        assertThat(sent.tryAcquire(3, 5, TimeUnit.SECONDS)).as("three sends").isTrue();
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(tookMillis).as("the last send comes about 500 ms after").isBetween(450L, 3000L);
        // The second call shared the first's sends: a new signal is the fourth send, not the
        // seventh.
        signal.now();
        assertThat(sent.tryAcquire(1, 5, TimeUnit.SECONDS)).isTrue();
        assertThat(sends.get()).isEqualTo(4);
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
