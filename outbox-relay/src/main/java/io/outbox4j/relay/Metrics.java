package io.outbox4j.relay;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.engine.Relay;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The relay's counts, fed by its {@link Observer} calls, and the store's statistics, read through
 * {@link OutboxAdmin#statistics} at most once per interval; rendered in the Prometheus text format
 * (version 0.0.4).
 */
final class Metrics implements Observer {
    /** Upper bounds (seconds) of the enqueue-to-complete histogram. */
    static final double[] LATENCY_BUCKETS = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800
    };

    /** A store statistics read that takes longer is abandoned and reported as failed. */
    static final Duration STATISTICS_TIMEOUT = Duration.ofSeconds(5);

    private final Map<List<String>, LongAdder> messages = new ConcurrentHashMap<>();
    private final LongAdder storeErrors = new LongAdder();
    private final LongAdder publishCalls = new LongAdder();
    private final AtomicLong publishNanos = new AtomicLong();
    private final AtomicLong[] latencyBuckets = new AtomicLong[LATENCY_BUCKETS.length];
    private final LongAdder latencyCount = new LongAdder();
    private final AtomicLong latencyMicros = new AtomicLong();

    private final Clock clock;
    private final OutboxAdmin admin;
    private final boolean storeStatistics;
    private final Duration interval;
    private final ExecutorService storeThread;
    private final BooleanSupplier running;
    private volatile @Nullable Relay relay;

    private final Object statisticsLock = new Object();
    private @Nullable Statistics statistics;
    private @Nullable Future<OutboxStatistics> inFlight;
    private long inFlightStart;

    /** The last store statistics read (or its failure), and when. */
    private record Statistics(
            @Nullable OutboxStatistics value, String error, Instant readAt, Duration took) {}

    Metrics(
            Clock clock,
            OutboxAdmin admin,
            boolean storeStatistics,
            Duration interval,
            ExecutorService storeThread,
            BooleanSupplier running) {
        this.clock = clock;
        this.admin = admin;
        this.storeStatistics = storeStatistics;
        this.interval = interval;
        this.storeThread = storeThread;
        this.running = running;
        for (int i = 0; i < latencyBuckets.length; i++) {
            latencyBuckets[i] = new AtomicLong();
        }
    }

    @Override
    public void onDelivery(Observation o) {
        String outcome = o.outcome().name().toLowerCase(Locale.ROOT);
        messages.computeIfAbsent(List.of(o.topic(), outcome), k -> new LongAdder()).increment();
        if (!o.duration().isZero()) {
            publishCalls.increment();
            publishNanos.addAndGet(o.duration().toNanos());
        }
        if (o.outcome() == Observation.Outcome.COMPLETED) {
            Duration latency = Duration.between(o.enqueuedAt(), clock.instant());
            double seconds = Math.max(0, latency.toNanos() / 1e9);
            for (int i = 0; i < LATENCY_BUCKETS.length; i++) {
                if (seconds <= LATENCY_BUCKETS[i]) {
                    latencyBuckets[i].incrementAndGet();
                }
            }
            latencyCount.increment();
            latencyMicros.addAndGet(Math.max(0, latency.toNanos() / 1000));
        }
    }

    @Override
    public void onStoreError(Throwable error) {
        storeErrors.increment();
    }

    /** How many messages of every topic ended with this outcome (lower-case name). */
    long count(String outcome) {
        long n = 0;
        for (Map.Entry<List<String>, LongAdder> e : messages.entrySet()) {
            if (e.getKey().get(1).equals(outcome)) {
                n += e.getValue().sum();
            }
        }
        return n;
    }

    /** The store statistics, read again when older than the interval; bounded by a timeout. */
    private Statistics statistics() {
        Instant now = clock.instant();
        Future<OutboxStatistics> pending;
        synchronized (statisticsLock) {
            Statistics last = statistics;
            if (last != null && Duration.between(last.readAt(), now).compareTo(interval) < 0) {
                return last;
            }
            Future<OutboxStatistics> running = inFlight;
            if (running == null) {
                inFlightStart = System.nanoTime();
                running = storeThread.submit(() -> admin.statistics(clock.instant()));
                inFlight = running;
            }
            pending = running;
        }
        Statistics result;
        long start = inFlightStart;
        try {
            OutboxStatistics s = pending.get(STATISTICS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            result = new Statistics(s, "", now, Duration.ofNanos(System.nanoTime() - start));
        } catch (TimeoutException e) {
            return new Statistics(
                    null,
                    "store statistics took longer than " + STATISTICS_TIMEOUT.toSeconds() + " s",
                    now,
                    STATISTICS_TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Statistics(null, "interrupted", now, Duration.ZERO);
        } catch (Exception e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            result =
                    new Statistics(
                            null,
                            String.valueOf(cause.getMessage()),
                            now,
                            Duration.ofNanos(System.nanoTime() - start));
        }
        synchronized (statisticsLock) {
            if (inFlight == pending) {
                inFlight = null;
                statistics = result;
            }
        }
        return result;
    }

    /** The relay whose publishing condition the exposition shows. */
    void relay(Relay r) {
        relay = r;
    }

    /** The whole exposition, in the Prometheus text format. */
    String render() {
        StringBuilder b = new StringBuilder(4096);
        header(
                b,
                "outbox4j_relay_running",
                "gauge",
                "1 while the relay claims and publishes, 0 once it drains or failed.");
        b.append("outbox4j_relay_running ").append(running.getAsBoolean() ? 1 : 0).append('\n');
        Relay r = relay;
        if (r != null) {
            Relay.Publishing p = r.publishing();
            Instant now = Instant.now();
            header(
                    b,
                    "outbox4j_relay_publish_failed_calls",
                    "gauge",
                    "Publisher calls that failed in a row since the last one that published.");
            b.append("outbox4j_relay_publish_failed_calls ")
                    .append(p.failedCallsInARow())
                    .append('\n');
            header(
                    b,
                    "outbox4j_relay_publish_stalled_seconds",
                    "gauge",
                    "How long publishing has been stalled (failed calls while messages wait for"
                            + " them, or a call that does not answer); 0 while it works.");
            b.append("outbox4j_relay_publish_stalled_seconds ")
                    .append(seconds(p.stalledFor(now).orElse(Duration.ZERO).toNanos() / 1000))
                    .append('\n');
            header(
                    b,
                    "outbox4j_relay_oldest_call_age_seconds",
                    "gauge",
                    "How long the oldest publisher call in flight has waited for its answer.");
            b.append("outbox4j_relay_oldest_call_age_seconds ")
                    .append(seconds(p.oldestCallAge(now).toNanos() / 1000))
                    .append('\n');
            Optional<Membership> m = r.membership();
            header(
                    b,
                    "outbox4j_relay_buckets",
                    "gauge",
                    "Buckets of the outbox's key space the relay owns as a member (all of them when"
                            + " it is not a member).");
            b.append("outbox4j_relay_buckets ")
                    .append(m.map(x -> x.buckets().size()).orElse(Buckets.COUNT))
                    .append('\n');
            header(
                    b,
                    "outbox4j_relay_members",
                    "gauge",
                    "Live members of the outbox at the relay's last renewal.");
            b.append("outbox4j_relay_members ")
                    .append(m.map(x -> x.members().size()).orElse(1))
                    .append('\n');
            header(
                    b,
                    "outbox4j_relay_handovers_total",
                    "counter",
                    "Buckets that changed owner in the relay's membership renewals (joins, leaves,"
                            + " lapsed members).");
            b.append("outbox4j_relay_handovers_total ").append(r.handovers()).append('\n');
        }

        header(
                b,
                "outbox4j_relay_messages_total",
                "counter",
                "Claimed messages by topic and what became of them: completed, published_not_recorded, released,"
                        + " dead_lettered, abandoned, not_recorded, stale.");
        messages.entrySet().stream()
                .sorted(
                        (x, y) -> {
                            int c = x.getKey().get(0).compareTo(y.getKey().get(0));
                            return c != 0 ? c : x.getKey().get(1).compareTo(y.getKey().get(1));
                        })
                .forEach(
                        e ->
                                b.append("outbox4j_relay_messages_total{topic=\"")
                                        .append(label(e.getKey().get(0)))
                                        .append("\",outcome=\"")
                                        .append(e.getKey().get(1))
                                        .append("\"} ")
                                        .append(e.getValue().sum())
                                        .append('\n'));

        header(
                b,
                "outbox4j_relay_store_errors_total",
                "counter",
                "Store failures the relay met (claim, renewal or outcome write).");
        b.append("outbox4j_relay_store_errors_total ").append(storeErrors.sum()).append('\n');

        header(
                b,
                "outbox4j_relay_publish_seconds",
                "summary",
                "Duration of the publisher call that carried each message handed to the publisher.");
        b.append("outbox4j_relay_publish_seconds_sum ")
                .append(seconds(publishNanos.get() / 1000))
                .append('\n');
        b.append("outbox4j_relay_publish_seconds_count ").append(publishCalls.sum()).append('\n');

        header(
                b,
                "outbox4j_relay_enqueue_to_complete_seconds",
                "histogram",
                "Time from enqueue (the store's enqueue time) to the recorded completion, per completed message.");
        for (int i = 0; i < LATENCY_BUCKETS.length; i++) {
            b.append("outbox4j_relay_enqueue_to_complete_seconds_bucket{le=\"")
                    .append(LATENCY_BUCKETS[i])
                    .append("\"} ")
                    .append(latencyBuckets[i].get())
                    .append('\n');
        }
        b.append("outbox4j_relay_enqueue_to_complete_seconds_bucket{le=\"+Inf\"} ")
                .append(latencyCount.sum())
                .append('\n');
        b.append("outbox4j_relay_enqueue_to_complete_seconds_sum ")
                .append(seconds(latencyMicros.get()))
                .append('\n');
        b.append("outbox4j_relay_enqueue_to_complete_seconds_count ")
                .append(latencyCount.sum())
                .append('\n');

        if (storeStatistics) {
            renderStatistics(b, statistics());
        }
        return b.toString();
    }

    private static void renderStatistics(StringBuilder b, Statistics s) {
        header(
                b,
                "outbox4j_outbox_statistics_up",
                "gauge",
                "1 if the last read of the store's statistics succeeded.");
        b.append("outbox4j_outbox_statistics_up ").append(s.value() == null ? 0 : 1).append('\n');
        header(
                b,
                "outbox4j_outbox_statistics_seconds",
                "gauge",
                "How long the last read of the store's statistics took.");
        b.append("outbox4j_outbox_statistics_seconds ")
                .append(seconds(s.took().toNanos() / 1000))
                .append('\n');
        OutboxStatistics v = s.value();
        if (v == null) {
            return;
        }
        header(
                b,
                "outbox4j_outbox_messages",
                "gauge",
                "Messages in the outbox by state: ready (due), delayed (not before / retry time), leased, dead.");
        state(b, "outbox4j_outbox_messages", "", v.total());
        header(
                b,
                "outbox4j_outbox_topic_messages",
                "gauge",
                "Messages in the outbox by topic and state.");
        new TreeMap<>(v.byTopic())
                .forEach(
                        (topic, c) ->
                                state(
                                        b,
                                        "outbox4j_outbox_topic_messages",
                                        "topic=\"" + label(topic) + "\",",
                                        c));
        header(
                b,
                "outbox4j_outbox_oldest_ready_age_seconds",
                "gauge",
                "How long the oldest ready message has been due (0 when none is).");
        b.append("outbox4j_outbox_oldest_ready_age_seconds ")
                .append(seconds(v.total().oldestReadyAge().toNanos() / 1000))
                .append('\n');
        header(
                b,
                "outbox4j_outbox_topic_oldest_ready_age_seconds",
                "gauge",
                "How long the oldest ready message of a topic has been due.");
        new TreeMap<>(v.byTopic())
                .forEach(
                        (topic, c) ->
                                b.append("outbox4j_outbox_topic_oldest_ready_age_seconds{topic=\"")
                                        .append(label(topic))
                                        .append("\"} ")
                                        .append(seconds(c.oldestReadyAge().toNanos() / 1000))
                                        .append('\n'));
        header(
                b,
                "outbox4j_outbox_blocked_keys",
                "gauge",
                "Keys whose later messages wait behind a dead letter.");
        b.append("outbox4j_outbox_blocked_keys ").append(v.blockedKeys()).append('\n');
    }

    private static void state(StringBuilder b, String name, String labels, TopicStatistics c) {
        long[] counts = {c.ready(), c.delayed(), c.leased(), c.dead()};
        String[] states = {"ready", "delayed", "leased", "dead"};
        for (int i = 0; i < states.length; i++) {
            b.append(name)
                    .append('{')
                    .append(labels)
                    .append("state=\"")
                    .append(states[i])
                    .append("\"} ")
                    .append(counts[i])
                    .append('\n');
        }
    }

    private static void header(StringBuilder b, String name, String type, String help) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static String seconds(long micros) {
        return Double.toString(micros / 1e6);
    }

    /** Escapes a label value: backslash, double quote and line feed. */
    static String label(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
