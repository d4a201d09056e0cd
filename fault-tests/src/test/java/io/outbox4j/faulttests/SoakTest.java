package io.outbox4j.faulttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: a bounded soak. Two writers enqueue keyed messages continuously (each owns half of the
 * keys, so each key has one writer and a defined order), two relays publish them, and the Kafka
 * broker flaps: down 2 s out of every 8. Heap (after a GC) and live threads are sampled every
 * second; at the end the broker stays up and the backlog drains. Verdict: nothing lost, each key
 * first published in order, and neither memory nor threads grow from the middle third of the run to
 * the last (the first flap starts reconnect threads once).
 *
 * <p>The build runs it for 30 s; {@code -Doutbox4j.soak.seconds=1800} runs it for half an hour:
 * {@code ./mvnw -pl fault-tests -am verify -Dtest=SoakTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Doutbox4j.soak.seconds=1800}.
 */
@Tag("soak")
class SoakTest {
    private static final int SECONDS = Integer.getInteger("outbox4j.soak.seconds", 30);
    private static final int RATE = 300; // messages per second, both writers together
    private static final int KEYS = 100;

    @Test
    void writersTwoRelaysAndAFlappingBroker_loseNothing_andMemoryAndThreadsStayFlat()
            throws Exception {
        KafkaServer kafka = Drill.broker();
        int messages = SECONDS * RATE;
        try (Drill d =
                new Drill(
                        "soak",
                        messages,
                        KEYS,
                        RelaySettings.drill(),
                        PostgresServer.shared(),
                        KafkaSink::open)) {
            Drill.LocalRelay a = d.localRelay("relay-a");
            Drill.LocalRelay b = d.localRelay("relay-b");
            a.relay().start();
            b.relay().start();
            long startedAt = System.nanoTime();
            AtomicReference<Throwable> writerFailure = new AtomicReference<>();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                int half = w;
                Thread t =
                        new Thread(
                                () -> write(d, half, messages, startedAt, writerFailure),
                                "soak-writer-" + w);
                t.start();
                writers.add(t);
            }
            List<Long> heap = new ArrayList<>();
            List<Integer> threads = new ArrayList<>();
            MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
            ThreadMXBean threadBean = ManagementFactory.getThreadMXBean();
            int flaps = 0;
            long flapDownMillis = 0;
            for (int second = 0; second < SECONDS; second++) {
                if (second % 8 == 5 && second + 3 < SECONDS) {
                    long down = System.currentTimeMillis();
                    kafka.stop();
                    Thread.sleep(2_000);
                    kafka.start();
                    flapDownMillis += System.currentTimeMillis() - down;
                    flaps++;
                    second += 2;
                } else {
                    Thread.sleep(1_000);
                }
                System.gc();
                heap.add(memory.getHeapMemoryUsage().getUsed());
                threads.add(threadBean.getThreadCount());
            }
            for (Thread t : writers) {
                t.join();
            }
            kafka.start();
            boolean drained = d.awaitDrained(Duration.ofMinutes(3));
            a.close();
            b.close();

            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("seconds", SECONDS);
            extra.put("writeRatePerSecond", RATE);
            extra.put("flaps", flaps);
            extra.put("brokerDownMillis", flapDownMillis);
            extra.put("heapAfterGcMiB", mib(heap));
            extra.put("liveThreads", threads);
            extra.put("drainedInTime", drained);
            d.report(extra);
            assertThat(writerFailure.get()).as("a writer failed").isNull();
            assertThat(flaps).as("the broker flapped").isGreaterThanOrEqualTo(SECONDS / 10);
            d.verify();
            // The baseline is the middle third: the first flap starts the broker's and the clients'
            // reconnect threads and buffers once; growth after that is what a leak looks like.
            int third = Math.max(1, heap.size() / 3);
            long firstHeap = max(heap.subList(third, 2 * third));
            long lastHeap = max(heap.subList(heap.size() - third, heap.size()));
            assertThat(lastHeap)
                    .as(
                            "heap after GC in the last third of the run vs the middle third (%s MiB)",
                            mib(heap))
                    .isLessThanOrEqualTo(firstHeap + firstHeap / 2 + 16L * 1024 * 1024);
            int firstThreads =
                    threads.subList(third, 2 * third).stream().max(Integer::compare).orElseThrow();
            int lastThreads =
                    threads.subList(threads.size() - third, threads.size()).stream()
                            .max(Integer::compare)
                            .orElseThrow();
            assertThat(lastThreads)
                    .as(
                            "live threads in the last third of the run vs the middle third (%s)",
                            threads)
                    .isLessThanOrEqualTo(firstThreads + 4);
        } finally {
            kafka.start();
        }
    }

    /** Enqueues this writer's half of the keys in order, paced over the run, in commits of 10. */
    private static void write(
            Drill d, int half, int messages, long startedAt, AtomicReference<Throwable> failure) {
        try {
            List<Message> batch = new ArrayList<>();
            for (int seq = 0; seq < messages; seq++) {
                if ((seq % KEYS) % 2 != half) {
                    continue;
                }
                batch.add(d.load.message(seq));
                if (batch.size() == 10 || seq >= messages - 2) {
                    List<Message> chunk = List.copyOf(batch);
                    d.db.jdbi().useTransaction(h -> d.db.store().enqueueAll(h, chunk));
                    batch.clear();
                    long due = startedAt + (long) seq * 1_000_000_000L / RATE;
                    long wait = due - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                }
            }
            if (!batch.isEmpty()) {
                d.db.jdbi().useTransaction(h -> d.db.store().enqueueAll(h, batch));
            }
        } catch (Throwable t) {
            failure.set(t);
        }
    }

    private static long max(List<Long> values) {
        return values.stream().max(Long::compare).orElseThrow();
    }

    private static List<Long> mib(List<Long> bytes) {
        return bytes.stream().map(b -> b / (1024 * 1024)).toList();
    }
}
