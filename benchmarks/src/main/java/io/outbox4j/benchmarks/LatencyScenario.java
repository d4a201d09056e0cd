package io.outbox4j.benchmarks;

import io.outbox4j.engine.Relay;
import io.outbox4j.publisher.kafka.KafkaPublisher;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * Commit-to-publish latency: business transactions that each enqueue one event are committed at a
 * fixed rate (scheduled, not closed-loop), the application calls {@code relay.wakeUp()} after each
 * commit, and a running relay publishes to Kafka. Latency is from the commit returning to the Kafka
 * publisher returning the message as acknowledged by the broker. Warm-up first; then one window per
 * round; median of the window percentiles.
 */
final class LatencyScenario {
    static final String SUBJECT = "latency_outbox";
    static final String KAFKA_TOPIC = "bench-latency";
    private static final int SENDERS = 4;

    private LatencyScenario() {}

    static Result run(Env env) {
        Options o = env.options;
        int rate = o.size("latency-rate");
        int seconds = o.size("latency-seconds");
        int warmupSeconds = o.size("latency-warmup-seconds");
        int rounds = o.size("rounds");
        int batch = o.size("latency-batch");
        byte[] payload = WriteScenario.payload(o.size("payload"));
        Result r =
                new Result(
                                "latency",
                                "Commit-to-publish latency at a fixed rate, wakeUp() after commit, Kafka")
                        .config("rate_per_s", rate)
                        .config("seconds_per_window", seconds)
                        .config("windows", rounds)
                        .config("warmup_seconds", warmupSeconds)
                        .config("payload_bytes", payload.length)
                        .config(
                                "relay",
                                "batch "
                                        + batch
                                        + (batch == 16 ? " (default)" : "")
                                        + ", workers 4, poll 1 s (default), wakeUp() after each commit")
                        .config("kafka_topic_partitions", 1);
        WriteScenario.createOrders(env);
        JdbiOutboxStore store = env.store(SUBJECT);
        env.kafka().createTopic(KAFKA_TOPIC, 1, Map.of());

        int warm = rate * warmupSeconds;
        int perWindow = rate * seconds;
        int total = warm + perWindow * rounds;
        Map<Integer, Long> committedAt = new ConcurrentHashMap<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Instruments.Counter counter = new Instruments.Counter().expect(total);
        Instruments.TimedStore timed = new Instruments.TimedStore(store, true);
        try (KafkaPublisher kafka =
                KafkaPublisher.builder()
                        .bootstrapServers(env.kafka().bootstrapServers())
                        .topicMapper(m -> KAFKA_TOPIC)
                        .build()) {
            Instruments.AckClock acks = new Instruments.AckClock(kafka);
            Relay relay =
                    Relay.builder(timed, acks)
                            .owner("bench-latency")
                            .deliveryTimeout(Drains.DELIVERY_TIMEOUT)
                            .batchSize(batch)
                            .observer(counter)
                            .build();
            relay.start();
            ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
            DataSource pool = env.pool();
            env.log("latency: " + total + " commits at " + rate + "/s (" + warm + " warm-up)");
            try {
                long period = 1_000_000_000L / rate;
                long start = System.nanoTime() + 50_000_000L;
                long maxLag = 0;
                Timings lags = new Timings();
                for (int i = 0; i < total && failure.get() == null; i++) {
                    long due = start + i * period;
                    long wait;
                    while ((wait = due - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    long lag = System.nanoTime() - due;
                    maxLag = Math.max(maxLag, lag);
                    lags.add(lag);
                    int seq = i;
                    senders.execute(
                            () -> {
                                try (Connection c = pool.getConnection()) {
                                    c.setAutoCommit(false);
                                    String key = WriteScenario.insertOrder(c);
                                    store.jdbc()
                                            .enqueue(
                                                    c,
                                                    WriteScenario.message(id(seq), key, payload));
                                    c.commit();
                                    committedAt.put(seq, System.nanoTime());
                                    relay.wakeUp();
                                } catch (Exception | Error e) {
                                    failure.compareAndSet(null, e);
                                }
                            });
                }
                // the load generator's own lateness: how long this machine leaves a runnable thread
                // waiting
                r.figure(
                        "pacer_p99_lag_ms",
                        "pacer: start delay p99 (the machine's own stalls)",
                        lags.percentileMs(99),
                        "ms");
                r.figure("pacer_max_lag_ms", "pacer: worst start delay", Stats.ms(maxLag), "ms");
                senders.shutdown();
                if (!senders.awaitTermination(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("senders did not finish");
                }
                if (failure.get() != null) {
                    throw new IllegalStateException(
                            "a committed enqueue failed: " + failure.get(), failure.get());
                }
                counter.await(Duration.ofSeconds(120));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } finally {
                senders.shutdownNow();
                relay.close();
            }
            List<Double> p50s = new ArrayList<>();
            List<Double> p99s = new ArrayList<>();
            long worst = 0;
            Timings all = new Timings();
            Timings toClaimStart = new Timings();
            Timings claimCall = new Timings();
            Timings toPublishStart = new Timings();
            Timings publishCall = new Timings();
            for (int w = 0; w < rounds; w++) {
                Timings window = new Timings();
                for (int i = warm + w * perWindow; i < warm + (w + 1) * perWindow; i++) {
                    Long acked = acks.ackedAt.get(id(i));
                    Long committed = committedAt.get(i);
                    if (acked == null || committed == null) {
                        throw new IllegalStateException(
                                "message "
                                        + id(i)
                                        + " has no "
                                        + (acked == null ? "ack" : "commit"));
                    }
                    long latency = Math.max(0, acked - committed);
                    long[] claimed = timed.claimedAt.get(id(i));
                    Long published = acks.publishStartedAt.get(id(i));
                    if (claimed != null && published != null) {
                        // commit → the claim that returned it started → it returned → publish
                        // started → acked
                        toClaimStart.add(Math.max(0, claimed[0] - committed));
                        claimCall.add(claimed[1] - claimed[0]);
                        toPublishStart.add(Math.max(0, published - claimed[1]));
                        publishCall.add(Math.max(0, acked - published));
                    }
                    window.add(latency);
                    all.add(latency);
                    worst = Math.max(worst, latency);
                }
                p50s.add(window.percentileMs(50));
                p99s.add(window.percentileMs(99));
                env.log(
                        String.format(
                                "latency window %d: p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                                w + 1,
                                window.percentileMs(50),
                                window.percentileMs(99),
                                window.percentileMs(100)));
            }
            double p50 = Stats.median(p50s);
            double p99 = Stats.median(p99s);
            r.figure("messages", "measured messages", (double) perWindow * rounds, "")
                    .figure("p50_ms", "p50 commit -> broker ack (median of windows)", p50, "ms")
                    .figure("p90_ms", "p90 (all windows)", all.percentileMs(90), "ms")
                    .figure("p99_ms", "p99 commit -> broker ack (median of windows)", p99, "ms")
                    .figure("max_ms", "max (all windows)", Stats.ms(worst), "ms")
                    .figure(
                            "wait_claim_p50_ms",
                            "commit -> claim start p50",
                            toClaimStart.percentileMs(50),
                            "ms")
                    .figure(
                            "wait_claim_p99_ms",
                            "commit -> claim start p99",
                            toClaimStart.percentileMs(99),
                            "ms")
                    .figure("claim_p50_ms", "claim statement p50", claimCall.percentileMs(50), "ms")
                    .figure("claim_p99_ms", "claim statement p99", claimCall.percentileMs(99), "ms")
                    .figure(
                            "claimed_to_publish_p99_ms",
                            "claim returned -> publish call p99",
                            toPublishStart.percentileMs(99),
                            "ms")
                    .figure(
                            "publish_p50_ms",
                            "publish call -> broker ack p50",
                            publishCall.percentileMs(50),
                            "ms")
                    .figure(
                            "publish_p99_ms",
                            "publish call -> broker ack p99",
                            publishCall.percentileMs(99),
                            "ms")
                    .figure(
                            "complete_p50_ms",
                            "complete() p50",
                            timed.completes.percentileMs(50),
                            "ms")
                    .figure(
                            "complete_p99_ms",
                            "complete() p99",
                            timed.completes.percentileMs(99),
                            "ms")
                    .figure(
                            "batch_mean",
                            "messages per claim (mean, empty claims included)",
                            timed.claimedAt.size() / (double) Math.max(1, timed.claims.size()),
                            "")
                    .check("p99 latency (ms)", p99, "<=", 25);
            r.config("p99_per_window_ms", p99s).config("p50_per_window_ms", p50s);
            r.headline(
                    "p50 "
                            + Result.fmt(p50)
                            + " / p99 "
                            + Result.fmt(p99)
                            + " / max "
                            + Result.fmt(Stats.ms(worst))
                            + " ms at "
                            + rate
                            + " msg/s",
                    "—");
        }
        env.execute("DROP TABLE " + WriteScenario.ORDERS + ", " + Env.q(SUBJECT));
        return r;
    }

    private static String id(int seq) {
        return "lat-" + seq;
    }
}
