package io.outbox4j.kafka.connect;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Abandonment;
import io.outbox4j.api.AdaptivePolling;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.api.StoreClockOffset;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.jdbi.v3.core.Jdbi;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task of {@link OutboxSourceConnector}: it claims messages through the store port under its
 * own owner id with a short lease, returns one record per message, renews the leases of records
 * Kafka has not acknowledged yet, and completes a message only once Kafka acknowledged its record
 * ({@link #commitRecord(SourceRecord, RecordMetadata)}), in batches.
 *
 * <p>When the task stops or fails, messages whose records were not acknowledged keep their leases
 * until they expire, and are then claimed again (by this or another task): delivery is at least
 * once, and the message id (header {@code outbox-id}) is the consumer's idempotency key. Messages
 * claimed but never handed to Connect are given back at once ({@link OutboxStore#abandon}). Several
 * tasks are safe: the store hands a key's messages to one claimer at a time, in order, and the next
 * message of a key becomes claimable only once the previous one was completed, that is acknowledged
 * by Kafka.
 *
 * <p>The worker creates this class; it is not meant to be used directly.
 */
public class OutboxSourceTask extends SourceTask {
    /** Task setting the connector adds: the task's index, part of its owner id. */
    static final String TASK_INDEX = "outbox.task.index";

    private static final Logger LOG = LoggerFactory.getLogger(OutboxSourceTask.class);
    private static final int WRITE_CHUNK = 1_000;
    private static final long STOP_TIMEOUT_MS = 5_000;

    private final InFlight inFlight = new InFlight();
    private final AtomicBoolean completionScheduled = new AtomicBoolean();
    private final Object completions = new Object();
    private long completionRound;
    private volatile boolean stopping;

    /**
     * Only Connect's poll thread: the next idle wait ({@link AdaptivePolling}, as the engine's
     * relay: a task no wake-up reaches, on MariaDB, MySQL or H2, finds flowing messages within
     * milliseconds).
     */
    private Duration idleWait = Duration.ofDays(1);

    private volatile @Nullable Settings settings;
    private volatile @Nullable String owner;

    /**
     * How long the task's membership of the outbox lasts without a renewal (renewed every third of
     * it): the buckets of a task that died move to the other tasks within this plus one renewal.
     */
    static final Duration MEMBER_LEASE = Duration.ofSeconds(10);

    /** Whether the task renewed its membership at least once (its claims are member claims). */
    private volatile boolean joined;

    private final StoreClockOffset storeOffset = new StoreClockOffset();

    private @Nullable HikariDataSource pool;
    private volatile @Nullable OutboxStore store;
    private volatile OutboxWakeUps.@Nullable Listening listening;
    private volatile @Nullable ScheduledExecutorService keeper;
    private long lastStoreWarning;

    /** Creates the task; the worker calls {@link #start(Map)}. */
    public OutboxSourceTask() {}

    @Override
    public String version() {
        return Version.get();
    }

    @Override
    public void start(Map<String, String> props) {
        Settings s = Settings.parse(props);
        String index = props.getOrDefault(TASK_INDEX, "0");
        String name = s.connectorName();
        if (name.length() > 200) {
            name = name.substring(0, 200);
        }
        String id = name + "/task-" + index + "/" + UUID.randomUUID().toString().substring(0, 8);
        settings = s;
        owner = id;
        pool =
                new Database(s.jdbcUrl(), s.user(), s.password())
                        .pool("outbox-connect-" + name + "-" + index);
        ScheduledExecutorService k =
                Executors.newSingleThreadScheduledExecutor(
                        r -> {
                            Thread t = new Thread(r, "outbox-connect-" + id + "-leases");
                            t.setDaemon(true);
                            return t;
                        });
        long completeEvery = s.completionInterval().toMillis();
        long renewEvery = Math.max(1, s.lease().toMillis() / 3);
        every(k, completeEvery, this::completeAcknowledged);
        every(k, renewEvery, this::renew);
        every(k, MEMBER_LEASE.toMillis() / 3, this::renewMembership);
        keeper = k;
        LOG.info("outbox task {} started: {}", id, s);
    }

    @Override
    public @Nullable List<SourceRecord> poll() throws InterruptedException {
        Settings s = requireStarted();
        String who = owner();
        OutboxStore st = store(s);
        if (st == null || stopping) {
            pause(s.pollInterval());
            return null;
        }
        int capacity = inFlight.awaitCapacity(s.maxInFlight(), s.pollInterval().toMillis());
        if (capacity == 0 || stopping) {
            return null;
        }
        long round = completionRound();
        boolean member = st instanceof OutboxMembership;
        if (member && !joined) {
            renewMembership();
            if (!joined) { // claims wait until the task's clock is in the store's frame
                pause(s.pollInterval());
                return null;
            }
        }
        List<Delivery> claimed;
        try {
            claimed =
                    st.claim(
                            new ClaimRequest(
                                    who,
                                    now(),
                                    s.lease(),
                                    Math.min(s.batchSize(), capacity),
                                    member));
        } catch (RuntimeException e) {
            warnStore("claiming from the outbox failed; trying again", e);
            pause(s.pollInterval());
            return null;
        }
        idleWait = AdaptivePolling.next(idleWait, s.pollInterval(), !claimed.isEmpty());
        if (claimed.isEmpty()) {
            awaitCompletion(round, idleWait);
            return null;
        }
        if (stopping) {
            abandon(st, receipts(claimed));
            return null;
        }
        return toRecords(s, st, claimed);
    }

    private @Nullable List<SourceRecord> toRecords(
            Settings s, OutboxStore st, List<Delivery> claimed) {
        List<SourceRecord> records = new ArrayList<>(claimed.size());
        List<String> heldBack = new ArrayList<>();
        Set<String> blockedKeys = new HashSet<>();
        for (Delivery d : claimed) {
            Message m = d.message();
            String key = m.key().orElse(null);
            if (key != null && blockedKeys.contains(key)) {
                // An earlier message of its key was dead-lettered in this batch: sending this one
                // would overtake it. Given back, it stays blocked behind the dead letter.
                heldBack.add(d.receipt());
                continue;
            }
            String topic = s.topics().topicFor(m.topic());
            String problem = OutboxSourceConnectorConfig.topicNameProblem(topic);
            String reason = null;
            if (problem != null) {
                reason =
                        "the topic mapping ("
                                + s.topics()
                                + ") gives '"
                                + topic
                                + "', which is not a legal Kafka topic name: "
                                + problem;
            } else if (s.maxAttempts() > 0 && d.attempt() > s.maxAttempts()) {
                reason =
                        "claimed "
                                + d.attempt()
                                + " times without Kafka acknowledging its record (max.attempts="
                                + s.maxAttempts()
                                + "); see the Connect worker's log for why its task failed";
            }
            if (reason != null) {
                deadLetter(st, d, reason);
                if (key != null) {
                    blockedKeys.add(key);
                }
                continue;
            }
            SourceRecord r = Records.toRecord(m, topic);
            inFlight.sent(r, d.receipt());
            records.add(r);
        }
        if (!heldBack.isEmpty()) {
            abandon(st, heldBack);
        }
        return records.isEmpty() ? null : records;
    }

    @Override
    public void commitRecord(SourceRecord record, @Nullable RecordMetadata metadata) {
        // Called on the producer's I/O thread once Kafka acknowledged the record (or, with a null
        // metadata, once Connect dropped it: filtered by a transformation, or refused with
        // errors.tolerance=all). Only bookkeeping here; the keeper thread writes to the store.
        Settings s = settings;
        int pending = inFlight.acknowledged(record);
        ScheduledExecutorService k = keeper;
        if (s != null
                && k != null
                && pending >= s.batchSize()
                && completionScheduled.compareAndSet(false, true)) {
            try {
                k.execute(this::completeAcknowledged);
            } catch (RuntimeException e) {
                completionScheduled.set(false); // shut down: stop() completes what is left
            }
        }
    }

    @Override
    public void stop() {
        stopping = true;
        ScheduledExecutorService k = keeper;
        if (k != null) {
            k.shutdown();
            try {
                if (!k.awaitTermination(STOP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                    k.shutdownNow();
                }
            } catch (InterruptedException e) {
                k.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        OutboxWakeUps.Listening l = listening;
        if (l != null) {
            l.close();
        }
        if (store != null && owner != null) {
            // Connect awaited the outstanding acknowledgements before stopping the task.
            completeAcknowledged();
            leave();
        }
        int left = inFlight.unacknowledged();
        if (left > 0) {
            LOG.info(
                    "outbox task {} stopped with {} records not acknowledged by Kafka; their"
                            + " messages are claimed again when their leases expire",
                    owner,
                    left);
        }
        HikariDataSource p = pool;
        if (p != null) {
            p.close();
        }
    }

    /**
     * Joins the outbox, or renews the task's membership: the outbox's buckets are spread over the
     * tasks (and relays) that share it, and each claims keyed messages only of its own
     * (docs/scale-out.md), so {@code tasks.max > 1} adds throughput. A failure is logged and
     * retried at the next renewal; the task's claims stay member claims, fenced by the store.
     */
    private void renewMembership() {
        OutboxStore st = store;
        String who = owner;
        if (!(st instanceof OutboxMembership m) || who == null || stopping) {
            return;
        }
        try {
            Instant sent = Instant.now();
            Membership renewed = m.renew(who, MEMBER_LEASE);
            Instant received = Instant.now();
            storeOffset.sync(sent, renewed.storeTime(), received);
            if (!joined) {
                LOG.info(
                        "outbox task {} joined the outbox: {} of its buckets among {} members",
                        who,
                        renewed.buckets().size(),
                        renewed.members().size());
            }
            joined = true;
        } catch (RuntimeException e) {
            warnStore("renewing the task's membership of the outbox failed; trying again", e);
        }
    }

    /**
     * This worker's clock moved into the store's frame: the task times every lease (claims,
     * renewals, dead letters) by the store's clock, read at each membership renewal ({@link
     * StoreClockOffset}: the offset from the middle of its round trip, slow renewals filtered), so
     * a skewed worker clock neither takes live leases nor grants short ones. Zero offset for a
     * store without membership.
     */
    private Instant now() {
        return storeOffset.toStoreTime(Instant.now());
    }

    /** Leaves the outbox at once, so the other tasks take this one's buckets. */
    private void leave() {
        OutboxStore st = store;
        String who = owner;
        if (st instanceof OutboxMembership m && who != null) {
            try {
                m.leave(who);
            } catch (RuntimeException e) {
                warnStore(
                        "leaving the outbox failed; the task's buckets move when its member lease"
                                + " ends",
                        e);
            }
        }
    }

    /** Writes one completion for every receipt Kafka acknowledged since the last one. */
    private void completeAcknowledged() {
        completionScheduled.set(false);
        OutboxStore st = store;
        String who = owner;
        if (st == null || who == null) {
            return;
        }
        List<String> receipts = inFlight.takeAcknowledged();
        if (receipts.isEmpty()) {
            return;
        }
        try {
            Set<String> stale = new HashSet<>();
            for (int i = 0; i < receipts.size(); i += WRITE_CHUNK) {
                List<String> chunk =
                        receipts.subList(i, Math.min(receipts.size(), i + WRITE_CHUNK));
                stale.addAll(st.complete(new Completion(who, chunk)));
            }
            inFlight.completed(receipts);
            if (!stale.isEmpty()) {
                LOG.warn(
                        "outbox task {}: {} of {} acknowledged messages could not be completed,"
                                + " their leases had expired (they are delivered again)",
                        who,
                        stale.size(),
                        receipts.size());
            }
        } catch (RuntimeException e) {
            inFlight.retryCompletion(receipts);
            warnStore("completing " + receipts.size() + " messages failed; trying again", e);
        }
        synchronized (completions) {
            completionRound++;
            completions.notifyAll();
        }
    }

    /** Moves the end of every live lease this task still needs to now + lease. */
    private void renew() {
        OutboxStore st = store;
        String who = owner;
        Settings s = settings;
        if (st == null || who == null || s == null) {
            return;
        }
        List<String> receipts = inFlight.renewable();
        if (receipts.isEmpty()) {
            return;
        }
        Instant until = now().plus(s.lease());
        try {
            Set<String> stale = new HashSet<>();
            for (int i = 0; i < receipts.size(); i += WRITE_CHUNK) {
                List<String> chunk =
                        receipts.subList(i, Math.min(receipts.size(), i + WRITE_CHUNK));
                stale.addAll(st.extend(new Extension(who, chunk, until)));
            }
            if (!stale.isEmpty()) {
                inFlight.lost(stale);
                LOG.warn(
                        "outbox task {}: {} leases had expired before they were renewed; their"
                                + " messages may be delivered twice",
                        who,
                        stale.size());
            }
        } catch (RuntimeException e) {
            warnStore("renewing " + receipts.size() + " leases failed; trying again", e);
        }
    }

    private void deadLetter(OutboxStore st, Delivery d, String reason) {
        LOG.warn(
                "outbox task {}: dead-lettering message {} (topic {}): {}",
                owner,
                d.message().id(),
                d.message().topic(),
                reason);
        try {
            st.deadLetter(new DeadLetter(owner(), d.receipt(), reason, now()));
        } catch (RuntimeException e) {
            warnStore("dead-lettering message " + d.message().id() + " failed", e);
        }
    }

    private void abandon(OutboxStore st, List<String> receipts) {
        try {
            st.abandon(new Abandonment(owner(), receipts));
        } catch (RuntimeException e) {
            warnStore(
                    "giving back "
                            + receipts.size()
                            + " unsent messages failed; they are claimed again when their leases"
                            + " expire",
                    e);
        }
    }

    private @Nullable OutboxStore store(Settings s) {
        OutboxStore st = store;
        HikariDataSource p = pool;
        if (st != null || p == null) {
            return st;
        }
        try {
            JdbiOutboxStore.Builder b =
                    JdbiOutboxStore.builder(Jdbi.create(p)).tableName(s.table());
            JdbiOutboxStore.Dialect dialect = s.dialect();
            if (dialect != null) {
                b.dialect(dialect);
            }
            JdbiOutboxStore built = b.build();
            store = built;
            // Commits by other processes end the task's idle wait (docs/relay.md, cross-process
            // wake-up); a store without them is polled.
            OutboxWakeUps.Listening l = built.listen(this::wakeUp);
            listening = l;
            if (stopping) { // stop() ran meanwhile and may have missed it
                l.close();
            }
            LOG.info("outbox task {} uses {}", owner, built);
            return built;
        } catch (RuntimeException e) {
            warnStore("cannot open the outbox store at " + Redact.url(s.jdbcUrl()), e);
            return null;
        }
    }

    /**
     * Messages may have been committed: ends an idle wait as a completion does, and makes a claim
     * that is running when it comes be followed by another at once.
     */
    private void wakeUp() {
        synchronized (completions) {
            completionRound++;
            completions.notifyAll();
        }
    }

    private long completionRound() {
        synchronized (completions) {
            return completionRound;
        }
    }

    /**
     * Waits until a completion was written after {@code round} (it may unblock keys), or times out.
     */
    private void awaitCompletion(long round, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (completions) {
            while (completionRound == round && !stopping) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return;
                }
                completions.wait(left);
            }
        }
    }

    /**
     * Runs {@code task} every {@code millis} on the keeper. The tasks catch and log their store
     * failures, so that none ends its schedule; stop() shuts the keeper down.
     */
    @SuppressWarnings("FutureReturnValueIgnored") // see above: nothing waits for these runs
    private static void every(ScheduledExecutorService keeper, long millis, Runnable task) {
        keeper.scheduleWithFixedDelay(task, millis, millis, TimeUnit.MILLISECONDS);
    }

    /** Waits {@code d}, less when a completion is written or the task stops. */
    private void pause(Duration d) throws InterruptedException {
        awaitCompletion(completionRound(), d);
    }

    /** Logs store trouble at most every 10 s with its stack trace, otherwise at debug level. */
    private void warnStore(String what, RuntimeException e) {
        long now = System.nanoTime();
        boolean loud;
        synchronized (this) {
            loud = now - lastStoreWarning > TimeUnit.SECONDS.toNanos(10) || lastStoreWarning == 0;
            if (loud) {
                lastStoreWarning = now;
            }
        }
        if (loud) {
            LOG.warn("outbox task {}: {}", owner, what, e);
        } else {
            LOG.debug("outbox task {}: {}", owner, what, e);
        }
    }

    private static List<String> receipts(List<Delivery> deliveries) {
        List<String> out = new ArrayList<>(deliveries.size());
        deliveries.forEach(d -> out.add(d.receipt()));
        return out;
    }

    private Settings requireStarted() {
        Settings s = settings;
        if (s == null) {
            throw new IllegalStateException("the task was not started");
        }
        return s;
    }

    private String owner() {
        String o = owner;
        if (o == null) {
            throw new IllegalStateException("the task was not started");
        }
        return o;
    }
}
