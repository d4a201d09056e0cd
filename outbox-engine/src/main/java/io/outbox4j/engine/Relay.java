package io.outbox4j.engine;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Incubating;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Observer;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.api.Publisher;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Moves messages from an outbox to a broker, at least once: claims a batch of leased messages from
 * an {@link OutboxStore}, publishes them through a {@link Publisher}, and records each outcome in
 * the store.
 *
 * <pre>{@code
 * Relay relay = Relay.builder(store, publisher)
 *         .deliveryTimeout(Duration.ofSeconds(10))
 *         .build();    // the defaults drain a backlog fast and stay light when idle
 * relay.start();       // background loop until close()
 * relay.wakeUp();      // after a commit: publish now instead of at the next poll
 * relay.close();       // stop claiming, let the batches in flight finish
 * }</pre>
 *
 * <p>One batch ({@link #runOnce()}) claims up to {@code batchSize} messages for a short {@link
 * #lease()}, renews the leases while it runs, publishes with at most {@code workers} publisher
 * calls at a time (a key's messages never in two calls at once, in claim order), bounds each call
 * by {@code deliveryTimeout}, decides a verdict for each failure (dead letter, retry after a delay,
 * or given back untried), records the outcomes in the store and observes each message. The loop
 * ({@link #start()}) claims while earlier batches publish, with claims that grow while they come
 * back full, bounded messages in flight, coalesced wake-ups (also from other processes when the
 * store implements {@link OutboxWakeUps}) and, when the store supports it ({@link
 * OutboxMembership}), a share of the outbox's buckets. The whole behaviour, step by step, with
 * failures, interrupts and logging: docs/engine.md. Every setting is defined once in {@link
 * RelaySetting}.
 *
 * <p>A relay is safe for use by several threads; a {@link #runOnce()} call runs beside the loop's
 * batches. The relay never closes the store or the publisher: they belong to the caller.
 */
public final class Relay implements AutoCloseable {
    /**
     * The default {@link Builder#batchSize(int) batch size}: the largest claim, 500 messages (the
     * loop starts at {@link #DEFAULT_MIN_BATCH_SIZE} and grows while its claims come back full).
     */
    public static final int DEFAULT_BATCH_SIZE = 500;

    /**
     * The default {@link Builder#minBatchSize(int) smallest claim} of the loop: 16 messages (or the
     * batch size, if that is smaller).
     */
    public static final int DEFAULT_MIN_BATCH_SIZE = 16;

    /**
     * The default {@link Builder#maxInFlight(int) bound on messages in flight}, in batches of the
     * largest size: 2, so one full batch can be claimed while another is published and recorded.
     */
    public static final int DEFAULT_IN_FLIGHT_BATCHES = 2;

    /**
     * The default {@link Builder#wakeUpWindow(Duration) wake-up window}: 4 ms. Wake-ups that come
     * within it after a claim started are served by one claim at its end. Chosen from the latency
     * benchmark (500 commits a second, PostgreSQL to Kafka): 4 ms kept commit-to-ack p99 near 7 ms
     * for 10 to 20 % more CPU per message than 10 ms (p99 about 14 ms); 0 reached p99 near 6 ms at
     * twice the CPU of 10 ms.
     */
    public static final Duration DEFAULT_WAKE_UP_WINDOW = Duration.ofMillis(4);

    /** The longest {@link Builder#wakeUpWindow(Duration) wake-up window}: 1 s. */
    public static final Duration MAX_WAKE_UP_WINDOW = Duration.ofSeconds(1);

    /** The default number of {@link Builder#workers(int) concurrent publisher calls}: 4. */
    public static final int DEFAULT_WORKERS = 4;

    /** The default {@link Builder#deliveryTimeout(Duration) bound of one publisher call}: 30 s. */
    public static final Duration DEFAULT_DELIVERY_TIMEOUT = Duration.ofSeconds(30);

    /** The default {@link Builder#maxAttempts(int) attempt at which a message is given up}: 8. */
    public static final int DEFAULT_MAX_ATTEMPTS = 8;

    /** The default {@link Builder#pollInterval(Duration) poll interval}: 1 s. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

    /** The default {@link Builder#shutdownTimeout(Duration) shutdown timeout}: 30 s. */
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

    /**
     * The default {@link Builder#lease(Duration) lease}: 15 s, renewed every 5 s. A crashed relay's
     * messages are claimable again at most this long after its last renewal.
     */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(15);

    /** The shortest lease a relay accepts: 1 s (renewed every third of it). */
    public static final Duration MIN_LEASE = Duration.ofSeconds(1);

    /**
     * The longest lease a relay accepts: 30 minutes. Nothing a relay needs takes longer; a bigger
     * lease only delays crash recovery.
     */
    public static final Duration MAX_LEASE = Duration.ofMinutes(30);

    /**
     * The upper end of the safety limit on one batch, whatever batch size, workers and delivery
     * timeout derive: no publisher call starts later than 30 minutes after the claim.
     */
    public static final Duration MAX_BATCH_DURATION = Duration.ofMinutes(30);

    /**
     * How long a relay's membership of its outbox lasts without a renewal (renewed every third of
     * it): 10 s.
     */
    public static final Duration DEFAULT_MEMBER_LEASE = Duration.ofSeconds(10);

    /**
     * How long publishing may be {@link Publishing#stalledFor(Instant) stalled} before health
     * checks count it as failing, unless they are told otherwise: 1 minute. A stopped broker makes
     * the Spring Boot {@code outbox} health and the standalone relay's readiness fail this long
     * after the first try that met it.
     */
    public static final Duration DEFAULT_MAX_PUBLISH_STALL = Duration.ofMinutes(1);

    /** The shortest time between two publish-failure log lines of one topic: 30 s. */
    public static final Duration DEFAULT_FAILURE_LOG_INTERVAL = Duration.ofSeconds(30);

    private final Settings settings;
    private final Pipeline pipeline;
    private @Nullable Thread loopThread;
    private final RelayLog log;
    private final @Nullable OutboxWakeUps wakeUps;
    private OutboxWakeUps.@Nullable Listening listening;

    private Relay(Settings settings, OutboxStore store, Publisher publisher) {
        this.settings = settings;
        this.wakeUps = store instanceof OutboxWakeUps w ? w : null;
        this.log = new RelayLog(settings.owner(), settings.failureLogInterval());
        this.pipeline = new Pipeline(settings, store, publisher, log);
    }

    /**
     * Starts building a relay between a store and a publisher.
     *
     * @param store where the messages are claimed and their outcomes recorded
     * @param publisher where the messages are published
     * @return a builder with the defaults; {@link Builder#build()} checks every setting
     */
    public static Builder builder(OutboxStore store, Publisher publisher) {
        return new Builder(store, publisher);
    }

    /**
     * Returns the lease every claim and every renewal asks for.
     *
     * @return the lease (default {@link #DEFAULT_LEASE})
     */
    public Duration lease() {
        return settings.lease();
    }

    /**
     * Runs one batch on the calling thread: claims up to {@code batchSize} messages, publishes,
     * records the outcomes and returns what happened. Works with or without {@link #start()}; it
     * may run beside the loop's batches (the store never hands two of them messages of one key at
     * once), and its publisher calls count against the same {@code workers}.
     *
     * @return how many messages were claimed, published, completed, released and dead-lettered
     * @throws IllegalStateException if the relay is closed
     * @throws RuntimeException the store's own failure if the claim failed (it is also reported to
     *     the observer)
     * @throws Error the error a publisher threw, after the batch's outcomes were recorded
     */
    public Result runOnce() {
        return pipeline.runOnce();
    }

    /**
     * Starts the relay loop on a daemon thread named {@code outbox4j-relay-<owner>}.
     *
     * @throws IllegalStateException if the relay was already started or is closed
     */
    public synchronized void start() {
        pipeline.ensureOpen();
        if (loopThread != null) {
            throw new IllegalStateException("relay '" + settings.owner() + "' is already started");
        }
        if (wakeUps != null) {
            // Commits by other processes wake the loop too (docs/relay.md, cross-process wake-up).
            // First, so that a store refusing to listen leaves the relay not started.
            listening = wakeUps.listen(pipeline::wakeUp);
        }
        Thread t = new Thread(pipeline::loop, "outbox4j-relay-" + settings.owner());
        t.setDaemon(true);
        loopThread = t;
        pipeline.loopStarting();
        log.started(settings);
        settings.members().start(pipeline::wakeUp);
        t.start();
    }

    /**
     * Asks the loop to claim now instead of at the end of its poll interval. Call it after
     * committing a transaction that enqueued messages. Cheap (a volatile read when a wake-up is
     * already pending), never blocks for long, and never lost: a wake-up that arrives while a claim
     * runs makes the loop claim again after it. Wake-ups are coalesced: the loop claims at once if
     * no claim started within the last {@link Builder#wakeUpWindow(Duration) wake-up window},
     * otherwise once at the end of that window for all the wake-ups that came meanwhile. Does
     * nothing before {@link #start()} or after {@link #close()}.
     */
    public void wakeUp() {
        pipeline.wakeUp();
    }

    /**
     * Stops the relay: no new batch is claimed and the batches in flight start no new publisher
     * call (what they have not handed over is given back untried). Waits up to {@code
     * shutdownTimeout} for the batches in flight to finish; past that, aborts them (their publisher
     * calls in flight are cancelled, their threads interrupted) and waits for their outcome writes.
     * Messages that were handed over but not published are released for an immediate retry. A
     * thread running {@link #runOnce()} is not interrupted. Idempotent; the store and the publisher
     * are left open.
     */
    @Override
    public void close() {
        if (!pipeline.close()) {
            return;
        }
        settings.members().leave();
        boolean interrupted = false;
        Thread loop;
        OutboxWakeUps.@Nullable Listening l;
        synchronized (this) {
            loop = loopThread;
            l = listening;
            listening = null;
        }
        if (l != null) {
            l.close();
        }
        if (loop != null && loop != Thread.currentThread()) {
            try {
                loop.join(1000);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        log.flushFailures(settings.clock().instant(), true);
        if (loop != null) {
            log.stopped(settings, pipeline.publishedTotal.get(), pipeline.deadLetteredTotal.get());
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Returns the relay's membership of its outbox as of its last renewal: the buckets it owns and
     * the live members. Empty while the relay is not started, when its store has no membership,
     * when {@link Builder#membership(boolean)} turned it off, or before the first renewal
     * succeeded.
     *
     * @return the last membership, or empty
     */
    public Optional<Membership> membership() {
        return Optional.ofNullable(settings.members().last());
    }

    /**
     * Returns how many buckets changed owner in this relay's membership renewals since it started
     * (joins, leaves and lapsed members it wrote into the assignment; docs/scale-out.md). Every
     * handover is written by exactly one renewal of one member, so the sum over an outbox's members
     * counts each once. Zero for a relay that is not a member.
     *
     * @return the buckets handed over by this relay's renewals
     */
    @Incubating
    public long handovers() {
        return settings.members().handovers();
    }

    /**
     * Returns what the relay is doing now, for health checks and metrics. Cheap (volatile reads).
     *
     * @return the state; {@link State#FAILING} as soon as a claim of the loop failed, until one
     *     succeeds again
     */
    public State state() {
        return pipeline.state();
    }

    /**
     * Returns when the last claim answered (successfully, empty or not), by the loop or by {@link
     * #runOnce()}, read from the relay's clock. A running relay claims at least once per poll
     * interval, so a last claim much older than that while {@link #state()} is {@link
     * State#RUNNING} means the loop is stuck (for example every batch waits on a publisher that
     * does not answer).
     *
     * @return the time of the last successful claim, or empty before the first
     */
    public Optional<Instant> lastClaim() {
        return Optional.ofNullable(pipeline.lastClaim());
    }

    /**
     * Returns whether the relay's publisher calls succeed, for health checks, metrics and alerts:
     * the failed calls since the last call that published, when publishing last succeeded, and how
     * long publishing has been {@link Publishing#stalledFor(Instant) stalled} while messages wait
     * for it. {@link #state()} covers the store; this covers the broker. Cheap (one short lock).
     *
     * @return the relay's publishing condition now
     */
    public Publishing publishing() {
        return settings.publishing().snapshot();
    }

    /**
     * The relay's publishing condition, as {@link #publishing()} reports it. Times come from the
     * relay's clock.
     *
     * <p>Publishing is <em>stalled</em> while its last publisher calls failed and messages still
     * wait for it (a call is in flight, or a failed message's retry is due), counted from the start
     * of the first failed call after the last success; or while a publisher call has not answered,
     * counted from its start. A broker that is down therefore stalls publishing from the first try
     * of the first message that meets it, even when that is the only message and it waits for its
     * retry between tries. Stalled publishing ends with the first call that publishes a message, or
     * once no failed message waits for a retry (its last try ended in a dead letter). A message
     * refused permanently (too large, say) fails one call but stalls nothing: it is dead-lettered
     * at once.
     */
    @Incubating
    public static final class Publishing {
        private final long failedCallsInARow;
        private final @Nullable Instant lastPublished;
        private final @Nullable Instant failingSince;
        private final @Nullable Instant retriesDueBy;
        private final int callsInFlight;
        private final @Nullable Instant oldestCallStarted;

        Publishing(
                long failedCallsInARow,
                @Nullable Instant lastPublished,
                @Nullable Instant failingSince,
                @Nullable Instant retriesDueBy,
                int callsInFlight,
                @Nullable Instant oldestCallStarted) {
            this.failedCallsInARow = failedCallsInARow;
            this.lastPublished = lastPublished;
            this.failingSince = failingSince;
            this.retriesDueBy = retriesDueBy;
            this.callsInFlight = callsInFlight;
            this.oldestCallStarted = oldestCallStarted;
        }

        /**
         * Returns the publisher calls that failed (no message of theirs published) since the last
         * call that published a message.
         *
         * @return 0 while publishing works
         */
        public long failedCallsInARow() {
            return failedCallsInARow;
        }

        /**
         * Returns when a publisher call last published a message.
         *
         * @return the time, or empty if none did since the relay was built
         */
        public Optional<Instant> lastPublished() {
            return Optional.ofNullable(lastPublished);
        }

        /**
         * Returns when the first of the {@link #failedCallsInARow()} failed calls started.
         *
         * @return the time, or empty while the last call published (or none failed)
         */
        public Optional<Instant> failingSince() {
            return Optional.ofNullable(failingSince);
        }

        /**
         * Returns the publisher calls in flight now.
         *
         * @return 0 to {@code workers}
         */
        public int callsInFlight() {
            return callsInFlight;
        }

        /**
         * Returns how long the oldest publisher call in flight has waited for its answer.
         *
         * @param now the relay clock's time
         * @return the age, or zero when no call is in flight
         */
        public Duration oldestCallAge(Instant now) {
            return oldestCallStarted == null ? Duration.ZERO : age(oldestCallStarted, now);
        }

        /**
         * Returns how long publishing has been stalled (see {@link Publishing}).
         *
         * @param now the relay clock's time
         * @return the time since publishing stalled, or empty while it is not stalled
         */
        public Optional<Duration> stalledFor(Instant now) {
            Instant since = oldestCallStarted;
            boolean waiting =
                    callsInFlight > 0 || (retriesDueBy != null && now.isBefore(retriesDueBy));
            if (failingSince != null
                    && waiting
                    && (since == null || failingSince.isBefore(since))) {
                since = failingSince;
            }
            return since == null ? Optional.empty() : Optional.of(age(since, now));
        }

        /**
         * Why publishing counts as failing against {@code limit}, for a health check.
         *
         * @param now the relay clock's time
         * @param limit how long publishing may be stalled before it counts as failing
         * @return the reason, or empty while publishing has not been stalled for {@code limit}
         */
        public Optional<String> problem(Instant now, Duration limit) {
            return stalledFor(now)
                    .filter(d -> d.compareTo(limit) >= 0)
                    .map(
                            d ->
                                    "publishing has been stalled for "
                                            + Durations.format(d)
                                            + " (limit "
                                            + Durations.format(limit)
                                            + "): "
                                            + failedCallsInARow
                                            + " failed publisher call(s) in a row, "
                                            + callsInFlight
                                            + " in flight, last success "
                                            + (lastPublished == null
                                                    ? "never"
                                                    : Durations.format(age(lastPublished, now))
                                                            + " ago"));
        }

        private static Duration age(Instant since, Instant now) {
            Duration d = Duration.between(since, now);
            return d.isNegative() ? Duration.ZERO : d;
        }

        @Override
        public String toString() {
            return "Publishing[failedCallsInARow="
                    + failedCallsInARow
                    + ", lastPublished="
                    + lastPublished
                    + ", failingSince="
                    + failingSince
                    + ", retriesDueBy="
                    + retriesDueBy
                    + ", callsInFlight="
                    + callsInFlight
                    + ", oldestCallStarted="
                    + oldestCallStarted
                    + "]";
        }
    }

    /** What a relay is doing, as {@link #state()} reports it. */
    public enum State {
        /** Built; {@link #start()} not called yet ({@link #runOnce()} may still be used). */
        NOT_STARTED,
        /** The loop runs and its last claim succeeded. */
        RUNNING,
        /**
         * The loop runs but its last claim failed (the store is unreachable or refuses); it retries
         * after a growing pause and is {@link #RUNNING} again after a successful claim.
         */
        FAILING,
        /** {@link #close()} was called and the batches in flight are finishing. */
        STOPPING,
        /** Closed, or the loop ended because the publisher threw an {@link Error}. */
        STOPPED
    }

    /** For tests: the machinery. */
    Pipeline pipeline() {
        return pipeline;
    }

    /**
     * What one batch did.
     *
     * @param claimed messages claimed from the store
     * @param published messages the broker accepted (completed or not)
     * @param completed published messages whose completion was recorded
     * @param released messages handed to the publisher, not published, and released for a later
     *     retry (the attempt counts)
     * @param deadLettered messages given up and parked in the dead letter
     * @param abandoned messages never handed to the publisher (held back behind a failed message of
     *     their key, not started, or their lease could not be proven) and given back untried
     */
    public record Result(
            int claimed,
            int published,
            int completed,
            int released,
            int deadLettered,
            int abandoned) {
        static final Result EMPTY = new Result(0, 0, 0, 0, 0, 0);
    }

    /**
     * Configures a {@link Relay}. Setters only record values; {@link #build()} checks them all and
     * fails with a message naming the setting and what to change.
     */
    public static final class Builder {
        private final OutboxStore store;
        private final Publisher publisher;
        private @Nullable String owner;
        private int batchSize = DEFAULT_BATCH_SIZE;
        private @Nullable Integer minBatchSize;
        private @Nullable Integer maxInFlight;
        private Duration wakeUpWindow = DEFAULT_WAKE_UP_WINDOW;
        private int workers = DEFAULT_WORKERS;
        private Duration deliveryTimeout = DEFAULT_DELIVERY_TIMEOUT;
        private Duration lease = DEFAULT_LEASE;
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private Backoff backoff = Backoff.DEFAULT;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private Clock clock = Clock.systemUTC();
        private Observer observer = Observer.NOOP;
        private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
        private Duration storeWriteTimeout = Settings.STORE_WRITE_TIMEOUT;
        private Duration clockCheck = Settings.CLOCK_CHECK;
        private Duration failureLogInterval = DEFAULT_FAILURE_LOG_INTERVAL;
        private int minMessagesPerCall = Settings.MIN_MESSAGES_PER_CALL;
        private boolean membership = true;
        private Duration memberLease = DEFAULT_MEMBER_LEASE;

        private Builder(OutboxStore store, Publisher publisher) {
            this.store = store;
            this.publisher = publisher;
        }

        /**
         * Sets the identity this relay claims under; every outcome write names it. Default: {@code
         * <host>-<pid>-<random>}, unique per relay.
         *
         * @param owner a non-blank name of at most 255 characters, without control characters
         * @return this builder
         */
        public Builder owner(String owner) {
            this.owner = owner;
            return this;
        }

        /**
         * Sets the largest claim: how many messages {@link Relay#runOnce()} asks for, and the size
         * the loop's claims grow to while they come back full (a backlog). Default {@value
         * #DEFAULT_BATCH_SIZE}. Any size up to the largest claim builds with the default timeouts:
         * the lease does not grow with the batch.
         *
         * @param batchSize 1 to {@value ClaimRequest#MAX_LIMIT}
         * @return this builder
         */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Sets the smallest claim of the loop: its first claim asks for this many, each claim that
         * comes back full doubles the next one (up to {@link #batchSize(int)}), a partial claim
         * halves it and an empty one resets it to this size. Default {@value
         * #DEFAULT_MIN_BATCH_SIZE}, or the batch size if that is smaller. Set it to the batch size
         * for claims of one fixed size.
         *
         * @param minBatchSize 1 to the batch size
         * @return this builder
         */
        public Builder minBatchSize(int minBatchSize) {
            this.minBatchSize = minBatchSize;
            return this;
        }

        /**
         * Sets how many messages the loop holds at most (claimed, not yet recorded), across the
         * batches in flight: the relay's memory does not grow with the backlog. The loop claims the
         * next batch while earlier ones are published and recorded as long as there is room for at
         * least half a claim. Default {@value #DEFAULT_IN_FLIGHT_BATCHES} × the batch size.
         *
         * @param maxInFlight at least the batch size
         * @return this builder
         */
        public Builder maxInFlight(int maxInFlight) {
            this.maxInFlight = maxInFlight;
            return this;
        }

        /**
         * Sets how {@link Relay#wakeUp()} calls are coalesced: a wake-up claims at once if no claim
         * started within this window, otherwise once at the end of the window for all wake-ups that
         * came meanwhile. It bounds the claims that wake-ups cause to one per window (250 a second
         * by default, however often the application commits), at the price of at most one window of
         * added latency under a steady stream of commits. Default {@link #DEFAULT_WAKE_UP_WINDOW}
         * (4 ms); 10 ms costs less CPU under a steady stream of commits, zero claims on every
         * wake-up.
         *
         * @param wakeUpWindow zero to {@link #MAX_WAKE_UP_WINDOW} (1 s)
         * @return this builder
         */
        public Builder wakeUpWindow(Duration wakeUpWindow) {
            this.wakeUpWindow = wakeUpWindow;
            return this;
        }

        /**
         * Sets how many publisher calls may run at once. Default {@value #DEFAULT_WORKERS}.
         *
         * @param workers at least 1
         * @return this builder
         */
        public Builder workers(int workers) {
            this.workers = workers;
            return this;
        }

        /**
         * Sets how long one publisher call may take before its messages count as failed. Default
         * {@link #DEFAULT_DELIVERY_TIMEOUT} (30 s). It may be longer than the lease: the relay
         * renews the lease while the call runs. The publisher is asked to answer within a tenth
         * less (at most 1 s less), so that its own reason for a failure (the broker's error)
         * reaches the dead letter and the log rather than the relay's timeout.
         *
         * @param deliveryTimeout a positive duration
         * @return this builder
         */
        public Builder deliveryTimeout(Duration deliveryTimeout) {
            this.deliveryTimeout = deliveryTimeout;
            return this;
        }

        /**
         * Sets how long a claim (and each renewal) leases the messages. Default {@link
         * #DEFAULT_LEASE} (15 s). The relay renews the leases of the messages it still holds every
         * third of the lease, so the lease bounds crash recovery (a crashed relay's messages are
         * claimable again at most one lease after its last renewal), not the batch's duration. The
         * relay stops handing messages to the publisher when less than a third of the last
         * confirmed lease is left (the store could not be reached to renew it).
         *
         * @param lease from {@link #MIN_LEASE} (1 s) to {@link #MAX_LEASE} (30 min)
         * @return this builder
         */
        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        /**
         * Sets the attempt at which a failing message is given up (dead-lettered). Default {@value
         * #DEFAULT_MAX_ATTEMPTS}. Only real tries count: a message given back untried keeps its
         * count.
         *
         * @param maxAttempts at least 1
         * @return this builder
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Sets the minimum delay before a failed message is retried; the relay adds 0–50 % on top.
         * Default {@link Backoff#DEFAULT} (exponential, 1 second to 10 minutes).
         *
         * @param backoff a deterministic backoff
         * @return this builder
         */
        public Builder backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /**
         * Sets the longest the loop waits after a partial or empty batch when no {@link
         * Relay#wakeUp()} comes. Default {@link #DEFAULT_POLL_INTERVAL} (1 s). After a claim that
         * found messages the loop waits 10 ms, doubling with every claim that finds none up to this
         * (adaptive polling, docs/engine.md).
         *
         * @param pollInterval a positive duration
         * @return this builder
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
            return this;
        }

        /**
         * Sets the clock for every lease and retry time. Default {@link Clock#systemUTC()}; tests
         * pass a clock they move by hand.
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Sets the hook told about each delivery attempt and each store failure. Default {@link
         * Observer#NOOP}.
         *
         * @param observer the observer
         * @return this builder
         */
        public Builder observer(Observer observer) {
            this.observer = observer;
            return this;
        }

        /**
         * Sets how long {@link Relay#close()} waits for the running batch before interrupting it.
         * Default {@link #DEFAULT_SHUTDOWN_TIMEOUT} (30 s).
         *
         * @param shutdownTimeout zero or positive
         * @return this builder
         */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
            return this;
        }

        /** For tests: the bound of each outcome write (5 seconds in production). */
        Builder storeWriteTimeout(Duration storeWriteTimeout) {
            this.storeWriteTimeout = storeWriteTimeout;
            return this;
        }

        /**
         * For tests that move the clock by hand: the longest a batch waits without reading the
         * clock (1 second in production).
         */
        Builder clockCheck(Duration clockCheck) {
            this.clockCheck = clockCheck;
            return this;
        }

        /**
         * Sets whether a started relay becomes a member of its outbox when the store supports it
         * ({@link OutboxMembership}): the {@value io.outbox4j.api.Buckets#COUNT} buckets of the key
         * space are spread over the members, and each claims keyed messages only of its own
         * buckets, so several relays on one outbox add throughput instead of fencing each other
         * (docs/scale-out.md). Default {@code true}. Turned off, the relay claims every bucket, as
         * before 0.2.
         *
         * @param membership whether to join the outbox as a member
         * @return this builder
         */
        public Builder membership(boolean membership) {
            this.membership = membership;
            return this;
        }

        /**
         * Sets how long the relay's membership lasts without a renewal, judged by the store's
         * clock; it is renewed every third of it. A crashed or paused relay's buckets move to the
         * other members within this lease plus one renewal; a closed relay's move at once. Default
         * {@link #DEFAULT_MEMBER_LEASE}.
         *
         * @param memberLease {@link OutboxMembership#MIN_LEASE} to {@link
         *     OutboxMembership#MAX_LEASE}
         * @return this builder
         */
        public Builder memberLease(Duration memberLease) {
            this.memberLease = memberLease;
            return this;
        }

        /** For tests: split even the smallest batch over the workers (1), or not (8). */
        Builder minMessagesPerCall(int minMessagesPerCall) {
            this.minMessagesPerCall = minMessagesPerCall;
            return this;
        }

        /** For tests: the shortest time between two failure lines of one topic (30 s). */
        Builder failureLogInterval(Duration failureLogInterval) {
            this.failureLogInterval = failureLogInterval;
            return this;
        }

        /**
         * Checks every setting and builds the relay.
         *
         * @return a relay, not started
         * @throws IllegalArgumentException naming the first invalid setting and what to change
         */
        public Relay build() {
            require(store != null, "store must not be null");
            require(publisher != null, "publisher must not be null");
            RelaySetting.BATCH_SIZE.check(batchSize);
            int min =
                    RelaySetting.MIN_BATCH_SIZE.check(
                            minBatchSize == null
                                    ? Math.min(DEFAULT_MIN_BATCH_SIZE, batchSize)
                                    : minBatchSize);
            require(
                    min <= batchSize,
                    "minBatchSize must be <= batchSize (" + batchSize + "), but was " + min);
            int inFlight =
                    RelaySetting.MAX_IN_FLIGHT.check(
                            maxInFlight == null
                                    ? DEFAULT_IN_FLIGHT_BATCHES * batchSize
                                    : maxInFlight);
            require(
                    inFlight >= batchSize,
                    "maxInFlight must be >= batchSize ("
                            + batchSize
                            + ") so that a full claim fits, but was "
                            + inFlight);
            RelaySetting.WAKE_UP_WINDOW.check(wakeUpWindow);
            RelaySetting.WORKERS.check(workers);
            RelaySetting.DELIVERY_TIMEOUT.check(deliveryTimeout);
            RelaySetting.LEASE.check(lease);
            RelaySetting.MAX_ATTEMPTS.check(maxAttempts);
            require(
                    backoff != null,
                    "backoff must not be null; use Backoff.DEFAULT or Backoff.exponential(base, max)");
            RelaySetting.POLL_INTERVAL.check(pollInterval);
            require(clock != null, "clock must not be null; use Clock.systemUTC()");
            require(
                    observer != null,
                    "observer must not be null; use Observer.NOOP to observe nothing");
            RelaySetting.SHUTDOWN_TIMEOUT.check(shutdownTimeout);
            positive(storeWriteTimeout, "storeWriteTimeout");
            positive(clockCheck, "clockCheck");
            positive(failureLogInterval, "failureLogInterval");
            require(
                    minMessagesPerCall >= 1,
                    "minMessagesPerCall must be >= 1, but was " + minMessagesPerCall);
            RelaySetting.MEMBER_LEASE.check(memberLease);
            String who = owner == null ? Owners.defaultOwner() : owner;
            // The claim request's own check (non-blank, at most 255 characters, no control
            // characters).
            new ClaimRequest(who, Instant.EPOCH, Duration.ofSeconds(1), 1);
            StoreClock storeClock = new StoreClock(clock);
            Settings settings =
                    new Settings(
                            who,
                            batchSize,
                            min,
                            inFlight,
                            wakeUpWindow,
                            workers,
                            deliveryTimeout,
                            maxAttempts,
                            backoff,
                            pollInterval,
                            storeClock,
                            new SafeObserver(observer),
                            shutdownTimeout,
                            storeWriteTimeout,
                            lease,
                            clockCheck,
                            failureLogInterval,
                            minMessagesPerCall,
                            new Members(
                                    membership && store instanceof OutboxMembership m ? m : null,
                                    who,
                                    memberLease,
                                    storeClock),
                            new PublishTracker(clock, pollInterval, lease));
            return new Relay(settings, store, publisher);
        }

        private static void positive(Duration value, String field) {
            require(value != null, field + " must not be null");
            require(
                    !value.isNegative() && !value.isZero(),
                    field + " must be positive, but was " + Durations.format(value));
        }

        private static void require(boolean condition, String message) {
            if (!condition) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
