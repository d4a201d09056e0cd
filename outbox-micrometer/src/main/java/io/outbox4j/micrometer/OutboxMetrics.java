package io.outbox4j.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.engine.Relay;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds a relay and a store to a Micrometer {@link MeterRegistry}.
 *
 * <ul>
 *   <li>As the relay's {@link Observer} ({@code Relay.builder(store, publisher).observer(metrics)})
 *       it counts what became of every claimed message ({@value #DELIVERIES}), times the publisher
 *       calls ({@value #PUBLISH}), the time from enqueue to completion ({@value #LATENCY}) and
 *       counts store failures ({@value #STORE_ERRORS}).
 *   <li>Given the store's {@link OutboxAdmin}, it reads {@link OutboxAdmin#statistics} on a
 *       schedule (default every {@link #DEFAULT_STATISTICS_INTERVAL}, never per message) on one
 *       daemon thread, and publishes the backlog as gauges: messages per state ({@value
 *       #MESSAGES}), the age of the oldest ready message ({@value #OLDEST_READY_AGE}) and the keys
 *       blocked by a dead letter ({@value #BLOCKED_KEYS}).
 *   <li>{@link #store(OutboxStore)} wraps the relay's store to time its port calls ({@value
 *       #STORE_CALLS}: claim, complete, release, dead letter, renewal, give-back) and {@link
 *       #relay(Relay)} publishes the relay's state ({@value #RELAY_STATE}, {@value
 *       #RELAY_LAST_CLAIM_AGE}).
 * </ul>
 *
 * Tags are bounded: {@code topic}, {@code outcome}, {@code result}, {@code state}, {@code
 * exception}, and the common tags given to the builder; never a message id or key. At most {@link
 * Builder#maxTopics(int) maxTopics} distinct topics get a tag of their own; later ones are counted
 * under {@value #OTHER_TOPICS}.
 *
 * <pre>{@code
 * OutboxMetrics metrics = OutboxMetrics.builder(registry).admin(store).build();
 * Relay relay = Relay.builder(metrics.store(store), publisher).observer(metrics).build();
 * metrics.relay(relay);
 * ...
 * relay.close();
 * metrics.close(); // stops the statistics schedule and removes the meters
 * }</pre>
 *
 * <p>The observer methods are cheap (a map lookup and a counter increment) and never throw.
 */
public final class OutboxMetrics implements Observer, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OutboxMetrics.class);

    /** Counter: claimed messages by {@code topic} and {@code outcome} (lower-case outcome name). */
    public static final String DELIVERIES = "outbox.deliveries";

    /**
     * Timer: the publisher call that carried a message, by {@code topic} and {@code result} ({@code
     * published} or {@code failed}); messages never handed to the publisher are not timed.
     */
    public static final String PUBLISH = "outbox.publish";

    /**
     * Timer with histogram buckets: from the store accepting a message (its enqueue, in the
     * caller's transaction) until its completion was recorded, by {@code topic}.
     */
    public static final String LATENCY = "outbox.delivery.latency";

    /**
     * Counter: store failures the relay met (claim, renewal, outcome write), by {@code exception}.
     */
    public static final String STORE_ERRORS = "outbox.store.errors";

    /** Gauge: messages in the outbox by {@code topic} and {@code state}. */
    public static final String MESSAGES = "outbox.messages";

    /** Time gauge: how long the oldest ready message of a {@code topic} has been due. */
    public static final String OLDEST_READY_AGE = "outbox.oldest.ready.age";

    /** Gauge: keys whose later messages wait behind a dead letter. */
    public static final String BLOCKED_KEYS = "outbox.blocked.keys";

    /**
     * Timer: the store port calls of a relay whose store was wrapped with {@link
     * #store(OutboxStore)}, by {@code operation} ({@code claim}, {@code complete}, {@code release},
     * {@code dead_letter}, {@code extend}, {@code abandon}) and {@code result} ({@code ok} or
     * {@code error}).
     */
    public static final String STORE_CALLS = "outbox.store.calls";

    /**
     * Distribution summary: the messages one successful store call carried (claimed, completed,
     * renewed, given back; 1 for a release or a dead letter), by {@code operation}.
     */
    public static final String STORE_MESSAGES = "outbox.store.messages";

    /**
     * Gauge: 1 for the state a relay bound with {@link #relay(Relay)} is in, 0 for the others, by
     * {@code state} ({@code not_started}, {@code running}, {@code failing}, {@code stopping},
     * {@code stopped}): see {@link Relay.State}.
     */
    public static final String RELAY_STATE = "outbox.relay.state";

    /**
     * Gauge: how many of the outbox's {@value io.outbox4j.api.Buckets#COUNT} buckets the bound
     * relay owns as a member (docs/scale-out.md); {@value io.outbox4j.api.Buckets#COUNT} for a
     * relay that claims every bucket (not a member), 0 while a member owns none.
     */
    public static final String RELAY_BUCKETS = "outbox.relay.buckets";

    /** Gauge: the live members of the outbox at the bound relay's last renewal (1 if none). */
    public static final String RELAY_MEMBERS = "outbox.relay.members";

    /**
     * Counter of buckets that changed owner in the relay's membership renewals (joins, leaves,
     * lapsed members); summed over an outbox's relays, every handover once.
     */
    public static final String RELAY_HANDOVERS = "outbox.relay.handovers";

    /**
     * Time gauge: how long ago the bound relay's last claim answered (or, before its first, how
     * long ago it was bound). A running relay claims at least once per poll interval; a growing
     * value means its loop is stuck or failing.
     */
    public static final String RELAY_LAST_CLAIM_AGE = "outbox.relay.last.claim.age";

    /**
     * Gauge: the bound relay's publisher calls that failed in a row since the last one that
     * published ({@link Relay.Publishing#failedCallsInARow()}).
     */
    public static final String RELAY_PUBLISH_FAILED_CALLS = "outbox.relay.publish.failed.calls";

    /**
     * Time gauge: how long the bound relay's publishing has been stalled ({@link
     * Relay.Publishing#stalledFor(Instant)}: failed calls while a message waits for them, such as a
     * stopped broker with one message waiting for its retry, or a call that does not answer); 0
     * while publishing works.
     */
    public static final String RELAY_PUBLISH_STALLED = "outbox.relay.publish.stalled";

    /** Time gauge: how long the bound relay's oldest publisher call in flight has waited. */
    public static final String RELAY_OLDEST_CALL_AGE = "outbox.relay.oldest.call.age";

    /** Counter: statistics reads that failed (the gauges keep their last values meanwhile). */
    public static final String STATISTICS_ERRORS = "outbox.statistics.errors";

    /** The default time between two statistics reads: 30 s. */
    public static final Duration DEFAULT_STATISTICS_INTERVAL = Duration.ofSeconds(30);

    /** The default number of topics that get a tag of their own: 100. */
    public static final int DEFAULT_MAX_TOPICS = 100;

    /** The {@code topic} tag of every topic past {@link Builder#maxTopics(int) maxTopics}. */
    public static final String OTHER_TOPICS = "_other";

    /**
     * The upper bounds of the {@value #LATENCY} histogram: 5 ms … 30 min, enough for a p99 in
     * milliseconds and for a backlog that takes minutes.
     */
    public static final List<Duration> LATENCY_BUCKETS =
            List.of(
                    Duration.ofMillis(5),
                    Duration.ofMillis(10),
                    Duration.ofMillis(25),
                    Duration.ofMillis(50),
                    Duration.ofMillis(100),
                    Duration.ofMillis(250),
                    Duration.ofMillis(500),
                    Duration.ofSeconds(1),
                    Duration.ofMillis(2500),
                    Duration.ofSeconds(5),
                    Duration.ofSeconds(10),
                    Duration.ofSeconds(30),
                    Duration.ofMinutes(1),
                    Duration.ofMinutes(5),
                    Duration.ofMinutes(30));

    private static final String[] STATES = {"ready", "delayed", "leased", "dead"};

    private final MeterRegistry registry;
    private final Tags tags;
    private final Clock clock;
    private final @Nullable OutboxAdmin admin;
    private final TopicNames topics;
    private final List<Meter> meters = new ArrayList<>();
    private final Map<String, DeliveryMeters> deliveryMeters = new ConcurrentHashMap<>();
    private final Map<String, Counter> storeErrors = new ConcurrentHashMap<>();
    private final Map<String, TopicGauges> topicGauges = new HashMap<>();
    private final @Nullable Counter statisticsErrors;
    private volatile long blockedKeys;
    private final @Nullable ScheduledExecutorService scheduler;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** The relay the gauges read; replaced only once it has stopped (a restart). */
    private @Nullable BoundRelay boundRelay;

    /** What the relay gauges read: the relay bound last. */
    private static final class BoundRelay {
        private volatile Relay relay;

        BoundRelay(Relay relay) {
            this.relay = relay;
        }

        Relay get() {
            return relay;
        }
    }

    private OutboxMetrics(Builder b) {
        this.registry = b.registry;
        this.tags = b.tags;
        this.clock = b.clock;
        this.admin = b.admin;
        this.topics = new TopicNames(b.maxTopics);
        if (admin == null) {
            statisticsErrors = null;
            scheduler = null;
            return;
        }
        statisticsErrors =
                register(
                        Counter.builder(STATISTICS_ERRORS)
                                .description("Outbox statistics reads that failed")
                                .tags(tags)
                                .register(registry));
        register(
                Gauge.builder(BLOCKED_KEYS, this, m -> m.blockedKeys)
                        .description("Keys whose later messages wait behind a dead letter")
                        .tags(tags)
                        .strongReference(true)
                        .register(registry));
        if (b.statisticsInterval.isZero()) {
            scheduler = null;
        } else {
            ScheduledThreadPoolExecutor pool =
                    new ScheduledThreadPoolExecutor(
                            1,
                            r -> {
                                Thread t = new Thread(r, "outbox4j-metrics-statistics");
                                t.setDaemon(true);
                                return t;
                            });
            pool.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            scheduler = pool;
        }
    }

    /** Reads the statistics once now and, with an interval, on the schedule. */
    private void start(Duration interval) {
        ScheduledExecutorService s = scheduler;
        if (s == null) {
            refresh();
        } else {
            // refresh() counts and logs its own failures; close() stops the schedule
            var unused =
                    s.scheduleWithFixedDelay(
                            this::refresh, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Starts binding metrics to a registry.
     *
     * @param registry where the meters are registered
     * @return a builder; {@link Builder#build()} registers the meters
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public static Builder builder(MeterRegistry registry) {
        return new Builder(registry);
    }

    // ------------------------------------------------------------------------------------------
    // Observer
    // ------------------------------------------------------------------------------------------

    @Override
    public void onDelivery(Observation observation) {
        try {
            record(observation);
        } catch (RuntimeException e) {
            LOG.debug("could not record an outbox observation", e);
        }
    }

    private void record(Observation o) {
        String topic = topics.tag(o.topic());
        DeliveryMeters m = deliveryMeters.computeIfAbsent(topic, DeliveryMeters::new);
        m.outcome(o.outcome()).increment();
        if (o.outcome() != Observation.Outcome.ABANDONED && !o.duration().isZero()) {
            boolean published =
                    o.outcome() == Observation.Outcome.COMPLETED
                            || o.outcome() == Observation.Outcome.PUBLISHED_NOT_RECORDED
                            || (o.outcome() == Observation.Outcome.STALE && o.error().isEmpty());
            (published ? m.publishedTimer : m.failedTimer).record(o.duration());
        }
        if (o.outcome() == Observation.Outcome.COMPLETED) {
            Duration latency = Duration.between(o.enqueuedAt(), clock.instant());
            if (!latency.isNegative()) {
                m.latency.record(latency);
            }
        }
    }

    @Override
    public void onStoreError(Throwable error) {
        try {
            String exception = error.getClass().getSimpleName();
            storeErrors
                    .computeIfAbsent(
                            exception.isEmpty() ? error.getClass().getName() : exception,
                            e ->
                                    register(
                                            Counter.builder(STORE_ERRORS)
                                                    .description(
                                                            "Store failures met by the relay (claim, lease renewal, outcome write)")
                                                    .tags(tags)
                                                    .tag("exception", e)
                                                    .register(registry)))
                    .increment();
        } catch (RuntimeException e) {
            LOG.debug("could not record an outbox store error", e);
        }
    }

    // ------------------------------------------------------------------------------------------
    // Store calls and relay state
    // ------------------------------------------------------------------------------------------

    /**
     * Wraps a store so that every port call through it is timed ({@value #STORE_CALLS}) and the
     * messages it carried counted ({@value #STORE_MESSAGES}). Give the wrapper to the relay; keep
     * the store itself for enqueueing and for {@link Builder#admin(OutboxAdmin) admin}. The wrapper
     * passes every answer and exception through unchanged; timing costs two {@code nanoTime} reads
     * per call (one call per claim, per batch of completions, per renewal).
     *
     * <pre>{@code
     * Relay relay = Relay.builder(metrics.store(store), publisher).observer(metrics).build();
     * metrics.relay(relay);
     * }</pre>
     *
     * @param store the store the relay would use
     * @return a store that times the calls and delegates them to {@code store}; when {@code store}
     *     implements {@link OutboxMembership} or {@link io.outbox4j.api.OutboxWakeUps} so does the
     *     wrapper (those calls pass through untimed), so a relay built on it still joins its outbox
     *     as a member and still hears commits of other processes
     * @throws IllegalArgumentException if {@code store} is null
     */
    public OutboxStore store(OutboxStore store) {
        notNull(store, "store");
        if (store instanceof TimedStore timed) {
            store = timed.delegate();
        }
        Map<TimedStore.Operation, TimedStore.Meters> m = new EnumMap<>(TimedStore.Operation.class);
        for (TimedStore.Operation o : TimedStore.Operation.values()) {
            m.put(
                    o,
                    new TimedStore.Meters(
                            storeTimer(o, "ok"),
                            storeTimer(o, "error"),
                            register(
                                    DistributionSummary.builder(STORE_MESSAGES)
                                            .description(
                                                    "Messages carried by one successful store call")
                                            .tags(tags)
                                            .tag("operation", o.tag)
                                            .register(registry))));
        }
        return TimedStore.over(store, m);
    }

    private Timer storeTimer(TimedStore.Operation o, String result) {
        return register(
                Timer.builder(STORE_CALLS)
                        .description("Store port calls of the relay")
                        .tags(tags)
                        .tag("operation", o.tag)
                        .tag("result", result)
                        .register(registry));
    }

    /**
     * Publishes a relay's {@link Relay#state() state} ({@value #RELAY_STATE}, one gauge per state,
     * 1 for the current one), the age of its {@link Relay#lastClaim() last claim} ({@value
     * #RELAY_LAST_CLAIM_AGE}) and its {@link Relay#publishing() publishing} ({@value
     * #RELAY_PUBLISH_FAILED_CALLS}, {@value #RELAY_PUBLISH_STALLED}, {@value
     * #RELAY_OLDEST_CALL_AGE}). The gauges read the relay when scraped. One relay per binder: give
     * each relay of an application its own binder with a distinguishing {@link
     * Builder#tags(Iterable) tag}. A relay that replaces a stopped one (a restart builds a new
     * {@link Relay}) may be bound to the same binder: the gauges then read the new one.
     *
     * @param relay the relay to watch
     * @throws IllegalArgumentException if {@code relay} is null
     * @throws IllegalStateException if a relay that has not stopped is already bound to this binder
     */
    public synchronized void relay(Relay relay) {
        notNull(relay, "relay");
        BoundRelay earlier = boundRelay;
        if (earlier != null) {
            Relay previous = earlier.get();
            if (previous == relay || previous.state() != Relay.State.STOPPED) {
                throw new IllegalStateException(
                        "a relay is already bound to this OutboxMetrics; bind each relay to its own"
                                + " binder with a distinguishing tag (a relay that replaces a"
                                + " stopped one, as after a restart, may be bound to the same"
                                + " binder)");
            }
            earlier.relay = relay; // the gauges read it from now on
            return;
        }
        BoundRelay current = new BoundRelay(relay);
        boundRelay = current;
        for (Relay.State state : Relay.State.values()) {
            register(
                    Gauge.builder(RELAY_STATE, current, c -> c.get().state() == state ? 1 : 0)
                            .description("1 for the relay's current state, 0 for the others")
                            .tags(tags)
                            .tag("state", state.name().toLowerCase(Locale.ROOT))
                            .strongReference(true)
                            .register(registry));
        }
        register(
                Gauge.builder(
                                RELAY_BUCKETS,
                                current,
                                r ->
                                        r.get()
                                                .membership()
                                                .map(m -> m.buckets().size())
                                                .orElse(io.outbox4j.api.Buckets.COUNT))
                        .description(
                                "Buckets of the outbox's key space the relay owns as a member"
                                        + " (all of them when it is not a member)")
                        .tags(tags)
                        .strongReference(true)
                        .register(registry));
        register(
                Gauge.builder(
                                RELAY_MEMBERS,
                                current,
                                r -> r.get().membership().map(m -> m.members().size()).orElse(1))
                        .description("Live members of the outbox at the relay's last renewal")
                        .tags(tags)
                        .strongReference(true)
                        .register(registry));
        register(
                FunctionCounter.builder(RELAY_HANDOVERS, current, r -> r.get().handovers())
                        .description(
                                "Buckets that changed owner in the relay's membership renewals"
                                        + " (joins, leaves, lapsed members)")
                        .tags(tags)
                        .register(registry));
        Instant bound = clock.instant();
        register(
                TimeGauge.builder(
                                RELAY_LAST_CLAIM_AGE,
                                current,
                                TimeUnit.MILLISECONDS,
                                r ->
                                        Math.max(
                                                0,
                                                Duration.between(
                                                                r.get().lastClaim().orElse(bound),
                                                                clock.instant())
                                                        .toMillis()))
                        .description("How long ago the relay's last claim answered")
                        .tags(tags)
                        .strongReference(true)
                        .register(registry));
        register(
                Gauge.builder(
                                RELAY_PUBLISH_FAILED_CALLS,
                                current,
                                r -> r.get().publishing().failedCallsInARow())
                        .description(
                                "Publisher calls that failed in a row since the last one that"
                                        + " published")
                        .tags(tags)
                        .strongReference(true)
                        .register(registry));
        register(
                TimeGauge.builder(
                                RELAY_PUBLISH_STALLED,
                                current,
                                TimeUnit.MILLISECONDS,
                                r ->
                                        r.get()
                                                .publishing()
                                                .stalledFor(clock.instant())
                                                .orElse(Duration.ZERO)
                                                .toMillis())
                        .description(
                                "How long publishing has been stalled (failed calls while a"
                                        + " message waits for them, or a call that does not"
                                        + " answer); 0 while it works")
                        .tags(tags)
                        .strongReference(true)
                        .register(registry));
        register(
                TimeGauge.builder(
                                RELAY_OLDEST_CALL_AGE,
                                current,
                                TimeUnit.MILLISECONDS,
                                r -> r.get().publishing().oldestCallAge(clock.instant()).toMillis())
                        .description("How long the oldest publisher call in flight has waited")
                        .tags(tags)
                        .strongReference(true)
                        .register(registry));
    }

    // ------------------------------------------------------------------------------------------
    // Statistics
    // ------------------------------------------------------------------------------------------

    /**
     * Reads the store's statistics now and updates the gauges; the schedule calls it, and so may a
     * caller that set {@link Builder#statisticsInterval(Duration) statisticsInterval(ZERO)}. A
     * failed read is counted in {@value #STATISTICS_ERRORS} and logged; the gauges keep their last
     * values. Does nothing without an {@link Builder#admin(OutboxAdmin) admin} or after {@link
     * #close()}.
     */
    public void refresh() {
        OutboxAdmin a = admin;
        if (a == null || closed.get()) {
            return;
        }
        OutboxStatistics statistics;
        try {
            statistics = a.statistics(clock.instant());
        } catch (RuntimeException e) {
            if (statisticsErrors != null) {
                statisticsErrors.increment();
            }
            LOG.warn("outbox statistics could not be read: {}", e.toString());
            return;
        }
        apply(statistics);
    }

    private synchronized void apply(OutboxStatistics statistics) {
        if (closed.get()) {
            return;
        }
        Map<String, long[]> counts = new HashMap<>();
        Map<String, Duration> ages = new HashMap<>();
        statistics.byTopic().entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .forEach(
                        e -> {
                            String tag = topics.tag(e.getKey());
                            TopicStatistics s = e.getValue();
                            long[] c = counts.computeIfAbsent(tag, t -> new long[STATES.length]);
                            c[0] += s.ready();
                            c[1] += s.delayed();
                            c[2] += s.leased();
                            c[3] += s.dead();
                            ages.merge(
                                    tag, s.oldestReadyAge(), (x, y) -> x.compareTo(y) >= 0 ? x : y);
                        });
        for (Map.Entry<String, long[]> e : counts.entrySet()) {
            topicGauges.computeIfAbsent(e.getKey(), TopicGauges::new);
        }
        for (TopicGauges g : topicGauges.values()) {
            long[] c = counts.getOrDefault(g.topic, new long[STATES.length]);
            System.arraycopy(c, 0, g.counts, 0, STATES.length);
            g.oldestReadyAgeNanos = ages.getOrDefault(g.topic, Duration.ZERO).toNanos();
        }
        blockedKeys = statistics.blockedKeys();
    }

    /**
     * Stops the statistics schedule and removes every meter this binder registered. Close it after
     * the relay, so that no observation arrives later (one that does registers its meters again).
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        List<Meter> registered;
        synchronized (meters) {
            registered = new ArrayList<>(meters);
            meters.clear();
        }
        registered.forEach(registry::remove);
    }

    private <M extends Meter> M register(M meter) {
        synchronized (meters) {
            meters.add(meter);
        }
        return meter;
    }

    /** The meters of one topic tag for deliveries. */
    private final class DeliveryMeters {
        private final EnumMap<Observation.Outcome, Counter> outcomes =
                new EnumMap<>(Observation.Outcome.class);
        final Timer publishedTimer;
        final Timer failedTimer;
        final Timer latency;

        DeliveryMeters(String topic) {
            Tags t = tags.and("topic", topic);
            for (Observation.Outcome o : Observation.Outcome.values()) {
                outcomes.put(
                        o,
                        register(
                                Counter.builder(DELIVERIES)
                                        .description(
                                                "Claimed messages by what became of them in their batch")
                                        .tags(t)
                                        .tag("outcome", o.name().toLowerCase(Locale.ROOT))
                                        .register(registry)));
            }
            publishedTimer = publishTimer(t, "published");
            failedTimer = publishTimer(t, "failed");
            latency =
                    register(
                            Timer.builder(LATENCY)
                                    .description(
                                            "From the enqueue of a message to the record of its completion")
                                    .tags(t)
                                    .serviceLevelObjectives(
                                            LATENCY_BUCKETS.toArray(new Duration[0]))
                                    .register(registry));
        }

        /** The counter of an outcome (every outcome has one: see the constructor). */
        Counter outcome(Observation.Outcome o) {
            return Objects.requireNonNull(outcomes.get(o));
        }

        private Timer publishTimer(Tags t, String result) {
            return register(
                    Timer.builder(PUBLISH)
                            .description("The publisher call that carried a message")
                            .tags(t)
                            .tag("result", result)
                            .register(registry));
        }
    }

    /** The gauges of one topic tag for the backlog; values written under the binder's lock. */
    private final class TopicGauges {
        final String topic;
        final long[] counts = new long[STATES.length];
        volatile long oldestReadyAgeNanos;

        TopicGauges(String topic) {
            this.topic = topic;
            Tags t = tags.and("topic", topic);
            for (int i = 0; i < STATES.length; i++) {
                int state = i;
                register(
                        Gauge.builder(MESSAGES, this, g -> g.count(state))
                                .description("Messages in the outbox by state")
                                .tags(t)
                                .tag("state", STATES[i])
                                .strongReference(true)
                                .register(registry));
            }
            register(
                    TimeGauge.builder(
                                    OLDEST_READY_AGE,
                                    this,
                                    TimeUnit.NANOSECONDS,
                                    g -> g.oldestReadyAgeNanos)
                            .description("How long the oldest ready message has been due")
                            .tags(t)
                            .strongReference(true)
                            .register(registry));
        }

        double count(int state) {
            synchronized (OutboxMetrics.this) {
                return counts[state];
            }
        }
    }

    /** At most {@code max} topics get a tag of their own, first come first served. */
    static final class TopicNames {
        private final int max;
        private final Map<String, String> known = new ConcurrentHashMap<>();

        TopicNames(int max) {
            this.max = max;
        }

        String tag(String topic) {
            String tag = known.get(topic);
            if (tag != null) {
                return tag;
            }
            synchronized (this) {
                tag = known.get(topic);
                if (tag == null) {
                    if (known.size() >= max) {
                        return OTHER_TOPICS;
                    }
                    known.put(topic, topic);
                    tag = topic;
                }
                return tag;
            }
        }
    }

    /** Collects the settings of an {@link OutboxMetrics}; {@link #build()} checks them. */
    public static final class Builder {
        private final MeterRegistry registry;
        private Tags tags = Tags.empty();
        private Clock clock = Clock.systemUTC();
        private @Nullable OutboxAdmin admin;
        private Duration statisticsInterval = DEFAULT_STATISTICS_INTERVAL;
        private int maxTopics = DEFAULT_MAX_TOPICS;

        private Builder(MeterRegistry registry) {
            this.registry = notNull(registry, "registry");
        }

        /**
         * Adds tags to every meter, e.g. the outbox's name when an application runs several.
         *
         * @param tags the tags; their keys must not be {@code topic}, {@code outcome}, {@code
         *     result}, {@code state}, {@code operation} or {@code exception}
         * @return this builder
         * @throws IllegalArgumentException if a tag key is one of those
         */
        public Builder tags(Iterable<Tag> tags) {
            notNull(tags, "tags");
            for (Tag t : tags) {
                if (List.of("topic", "outcome", "result", "state", "operation", "exception")
                        .contains(t.getKey())) {
                    throw new IllegalArgumentException(
                            "tag key '" + t.getKey() + "' is set by OutboxMetrics itself");
                }
            }
            this.tags = this.tags.and(tags);
            return this;
        }

        /**
         * Reads the backlog gauges from this admin port (usually the store itself). Without it,
         * only the relay's meters are registered.
         *
         * @param admin the store's admin port
         * @return this builder
         */
        public Builder admin(OutboxAdmin admin) {
            this.admin = notNull(admin, "admin");
            return this;
        }

        /**
         * Sets the time between two statistics reads. Each read counts the outbox in the store, so
         * keep it near the scrape interval. {@link Duration#ZERO} starts no schedule: the gauges
         * are read once at build and then on each {@link OutboxMetrics#refresh()}.
         *
         * @param interval the interval (default {@link #DEFAULT_STATISTICS_INTERVAL}), zero or at
         *     least 1 s
         * @return this builder
         * @throws IllegalArgumentException if it is negative or below 1 s and not zero
         */
        public Builder statisticsInterval(Duration interval) {
            if (interval == null
                    || interval.isNegative()
                    || (!interval.isZero() && interval.compareTo(Duration.ofSeconds(1)) < 0)) {
                throw new IllegalArgumentException(
                        "statisticsInterval must be zero or at least 1s, but was " + interval);
            }
            this.statisticsInterval = interval;
            return this;
        }

        /**
         * Sets how many distinct topics get a tag of their own; later ones share the tag {@value
         * #OTHER_TOPICS}, so a run-away topic naming scheme cannot flood the registry.
         *
         * @param maxTopics the cap (default {@link #DEFAULT_MAX_TOPICS})
         * @return this builder
         * @throws IllegalArgumentException if it is below 1
         */
        public Builder maxTopics(int maxTopics) {
            if (maxTopics < 1) {
                throw new IllegalArgumentException("maxTopics must be >= 1, but was " + maxTopics);
            }
            this.maxTopics = maxTopics;
            return this;
        }

        /**
         * Sets the clock the statistics and the enqueue-to-completion latency are read with; the
         * relay's clock (default: the system clock in UTC).
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = notNull(clock, "clock");
            return this;
        }

        /**
         * Registers the meters and, with an {@link #admin(OutboxAdmin) admin}, starts reading the
         * statistics (the first read at once).
         *
         * @return the binder, to pass to {@code Relay.Builder#observer}
         */
        public OutboxMetrics build() {
            OutboxMetrics metrics = new OutboxMetrics(this);
            metrics.start(statisticsInterval);
            return metrics;
        }
    }

    private static <T> T notNull(T value, String field) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        return value;
    }
}
