package io.outbox4j.faulttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Observer;
import io.outbox4j.api.Publisher;
import io.outbox4j.engine.Relay;
import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.KafkaServer;
import io.outbox4j.testservices.PostgresServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import org.assertj.core.api.SoftAssertions;

/**
 * One fault drill: a fresh outbox database, a fresh topic, a keyed load, the counting consumer and
 * the relays started for it; then the figures and the verdict.
 */
final class Drill implements AutoCloseable {
    private static KafkaServer broker;

    final String scenario;
    final KeyedLoad load;
    final OutboxDatabase db;
    final DeliveryLedger ledger;
    final RelaySettings settings;
    private final Sink sink;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final List<Fault> faults = new ArrayList<>();
    private final long createdAtNanos = System.nanoTime();
    private long drainedAtNanos;
    private Path figuresFile = FaultFigures.file();

    /**
     * The drills' broker: a private in-JVM KRaft broker (it must be stoppable), started once per
     * JVM and running when returned.
     */
    static synchronized KafkaServer broker() {
        if (broker == null) {
            broker = startEmbeddedBroker();
        }
        broker.start();
        return broker;
    }

    /**
     * {@link KafkaServer#startEmbedded()}, tried up to three times: it picks the broker and the
     * controller port one after the other with {@code ServerSupport.freePort()}, which can hand out
     * the same port twice ("two listeners on the same port"), seen here once in a few runs.
     */
    private static KafkaServer startEmbeddedBroker() {
        IllegalArgumentException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            try {
                return KafkaServer.startEmbedded();
            } catch (IllegalArgumentException e) {
                last = e;
            }
        }
        throw last;
    }

    /**
     * Opens a drill without enqueueing anything: the test writes its load itself, or calls {@link
     * #enqueueLoad()}.
     *
     * @param server the database server of the outbox
     * @param sinks where the relays publish and the consumer counts
     */
    Drill(
            String scenario,
            int messages,
            int keys,
            RelaySettings settings,
            DatabaseServer server,
            Sink.Factory sinks) {
        this.scenario = scenario;
        this.settings = settings;
        String topic = "fault-" + scenario.replace('_', '-') + "-" + suffix();
        this.load = new KeyedLoad("m" + suffix(), topic, messages, keys);
        this.db = OutboxDatabase.create(server, "fault_" + scenario, 8);
        resources.add(db);
        this.ledger = new DeliveryLedger(messages);
        try {
            this.sink = sinks.open(topic, load, ledger);
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
        resources.add(sink);
    }

    private static String suffix() {
        return UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Starts a drill on PostgreSQL and Kafka and enqueues its whole load (the relays then work
     * through a backlog).
     */
    static Drill start(String scenario, int messages, int keys, RelaySettings settings) {
        return new Drill(
                        scenario,
                        messages,
                        keys,
                        settings,
                        PostgresServer.shared(),
                        KafkaSink::open)
                .enqueueLoad();
    }

    /**
     * Enqueues the drill's whole load (the relays then work through a backlog); closes the drill if
     * that fails.
     *
     * @return this drill
     */
    Drill enqueueLoad() {
        try {
            db.enqueue(load.all());
        } catch (RuntimeException e) {
            try {
                close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return this;
    }

    /** A relay in this JVM, its leases journaled, its Kafka records stamped with its name. */
    record LocalRelay(String name, Relay relay, LeaseJournal journal, Publisher publisher)
            implements AutoCloseable {
        @Override
        public void close() {
            relay.close();
            publisher.close();
        }
    }

    LocalRelay localRelay(String name) {
        return localRelay(name, Observer.NOOP);
    }

    LocalRelay localRelay(String name, Observer observer) {
        Publisher publisher = sink.publisher(name, settings);
        LeaseJournal journal = LeaseJournal.inMemory(db.store());
        Relay relay =
                FaultRelays.relay(
                        journal,
                        FaultRelays.withLinkLatency(publisher, settings.linkLatency()),
                        name,
                        settings,
                        observer);
        LocalRelay local = new LocalRelay(name, relay, journal, publisher);
        resources.add(local);
        return local;
    }

    /** Where this drill's relays publish. */
    Sink sink() {
        return sink;
    }

    /** A relay in a child JVM (Kafka drills only: the child builds its own Kafka publisher). */
    ChildRelay childRelay(String name) {
        return childRelay(name, settings);
    }

    /** {@link #childRelay(String)} with settings of its own (a skewed clock, say). */
    ChildRelay childRelay(String name, RelaySettings settings) {
        return childRelay(name, settings, db.jdbcUrl());
    }

    /** {@link #childRelay(String, RelaySettings)} reaching the database at another URL. */
    ChildRelay childRelay(String name, RelaySettings settings, String jdbcUrl) {
        if (!(sink instanceof KafkaSink kafka)) {
            throw new IllegalStateException("child relays publish to Kafka only, not to " + sink);
        }
        ChildRelay child =
                ChildRelay.start(
                        name,
                        db,
                        jdbcUrl,
                        kafka.bootstrapServers(),
                        settings,
                        Path.of(
                                System.getProperty("basedir", "."),
                                "target",
                                "fault-tests",
                                scenario));
        resources.add(child);
        return child;
    }

    /** Waits until the local relay has claimed at least {@code deliveries}. */
    static void awaitClaimed(LeaseJournal journal, long deliveries, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (journal.snapshot().claimed() < deliveries) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "the relay claimed "
                                + journal.snapshot().claimed()
                                + " deliveries, not "
                                + deliveries
                                + ", within "
                                + timeout);
            }
            Thread.sleep(2);
        }
    }

    /**
     * One fault: what, whose, when, the messages the relay held leases on at that moment, who may
     * recover them (the publishers whose records count), and figures of its own.
     */
    record Fault(
            String kind,
            String relay,
            long atMillis,
            Set<String> leasedIds,
            Predicate<String> recoverer,
            Map<String, Object> figures) {}

    /** The faults noted so far. */
    List<Fault> faults() {
        return List.copyOf(faults);
    }

    /**
     * Notes one fault; its recovery time is measured at the end: from {@code atMillis} to the first
     * publish of a message in {@code leasedIds} by a publisher {@code recoverer} accepts.
     *
     * @return the fault's own figures, to add to
     */
    Map<String, Object> fault(
            String kind,
            String relay,
            long atMillis,
            Set<String> leasedIds,
            Predicate<String> recoverer) {
        Fault f = new Fault(kind, relay, atMillis, leasedIds, recoverer, new LinkedHashMap<>());
        faults.add(f);
        return f.figures();
    }

    /**
     * Kills {@code child} with SIGKILL as soon as it holds leases (after up to 5 s of waiting for
     * them) and notes a {@code kill-9} fault: the messages it had leased, to be recovered by a
     * relay {@code recoverer} accepts. The fault's figures start with {@code claimedBeforeKill}.
     *
     * @return the fault
     */
    Fault killNine(ChildRelay child, Predicate<String> recoverer) throws InterruptedException {
        child.awaitHoldingLeases(Duration.ofSeconds(5));
        long killAt = child.kill();
        LeaseJournal.Snapshot journal = child.journal();
        fault("kill-9", child.name(), killAt, journal.leasedIds(), recoverer)
                .put("claimedBeforeKill", journal.claimed());
        return faults.get(faults.size() - 1);
    }

    /**
     * Waits until every message reached the broker and the outbox is empty.
     *
     * @return whether both happened in time
     */
    boolean awaitDrained(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean all = ledger.awaitAll(timeout);
        while (all && db.unfinished() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        drainedAtNanos = System.nanoTime();
        return all && db.unfinished() == 0;
    }

    /** Waits until the consumer has seen {@code messages} distinct messages. */
    static void awaitPublished(Drill d, int messages, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (d.ledger.distinct() < messages) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        d.scenario
                                + ": only "
                                + d.ledger.distinct()
                                + " messages published within "
                                + timeout
                                + ", waiting for "
                                + messages);
            }
            Thread.sleep(2);
        }
    }

    /**
     * The drill's own figures for {@link #report}, in order, starting with what its recovery time
     * measures.
     */
    static Map<String, Object> figures(String recoveryMeans) {
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("recoveryMeans", recoveryMeans);
        return extra;
    }

    /** Computes the figures and writes them to {@code target/fault-figures.json}. */
    void report(Map<String, Object> extra) {
        sink.checkHealthy();
        List<Long> recoveries = new ArrayList<>();
        List<Long> resumptions = new ArrayList<>();
        List<Map<String, Object>> faultFigures = new ArrayList<>();
        for (Fault f : faults) {
            List<Integer> seqs = f.leasedIds().stream().map(load::seqOf).toList();
            OptionalLong next = ledger.firstPublishAt(f.atMillis(), seqs, f.recoverer());
            Long recovery = next.isPresent() ? next.getAsLong() - f.atMillis() : null;
            OptionalLong resumed = ledger.firstPublishAt(f.atMillis(), null, f.recoverer());
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("kind", f.kind());
            out.put("relay", f.relay());
            out.put("leasedAtFault", f.leasedIds().size());
            // of those: already published when the fault came (a redelivery is then a duplicate),
            // and published again afterwards by a relay that recovers them (none when the faulty
            // relay's completion reached the database just before the fault, unjournaled)
            out.put(
                    "leasedPublishedBefore",
                    ledger.countWithRecord(seqs, (at, by) -> at < f.atMillis()));
            out.put(
                    "leasedPublishedAfterByOthers",
                    ledger.countWithRecord(
                            seqs, (at, by) -> at >= f.atMillis() && f.recoverer().test(by)));
            out.put("recoveryMillis", recovery);
            out.put(
                    "resumedMillis",
                    resumed.isPresent() ? resumed.getAsLong() - f.atMillis() : null);
            out.putAll(f.figures());
            if (recovery != null) {
                recoveries.add(recovery);
            }
            if (resumed.isPresent()) {
                resumptions.add(resumed.getAsLong() - f.atMillis());
            }
            faultFigures.add(out);
        }
        Map<String, Object> fig = new LinkedHashMap<>();
        fig.put("messages", load.messages());
        fig.put("keys", load.keys());
        fig.put("faults", faults.size());
        fig.put("lost", ledger.lost());
        fig.put("duplicates", ledger.duplicates());
        fig.put("recordsRead", ledger.records());
        fig.put("firstSeenOrderInversions", ledger.inversions());
        fig.put("keysOutOfOrder", ledger.keysOutOfOrder());
        fig.put("deadLetters", db.deadLetters());
        fig.put("unfinishedInOutbox", db.unfinished());
        fig.put("recoveryMillis", summary(recoveries));
        fig.put("resumedMillis", summary(resumptions));
        fig.put(
                "resumedMeans",
                "from the fault to the first publish of any message by a relay that counts for"
                        + " recovery (the next relay started after a kill includes its JVM start)");
        fig.put(
                "runMillis",
                ((drainedAtNanos == 0 ? System.nanoTime() : drainedAtNanos) - createdAtNanos)
                        / 1_000_000);
        fig.putAll(extra);
        fig.put("faultDetails", faultFigures);
        fig.put("inversionExamples", ledger.inversionExamples());
        fig.put("missingExamples", ledger.missing(20));
        fig.put("settings", settings.toArgs());
        figuresFile = FaultFigures.record(scenario, fig);
    }

    /**
     * Asserts the outcome: nothing lost, nothing dead-lettered or left in the outbox, every key
     * first published in enqueue order.
     */
    void verify() {
        Path file = figuresFile;
        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(ledger.lost())
                .as(
                        "%s: messages never published to Kafka (first missing: %s; still in the"
                                + " outbox: %d, dead letters: %d; figures in %s)",
                        scenario, ledger.missing(20), db.unfinished(), db.deadLetters(), file)
                .isZero();
        soft.assertThat(ledger.keysOutOfOrder())
                .as(
                        "%s: keys whose messages were first published out of enqueue order"
                                + " (%d inversions; e.g. %s; figures in %s)",
                        scenario, ledger.inversions(), ledger.inversionExamples(), file)
                .isZero();
        soft.assertThat(db.deadLetters())
                .as("%s: dead letters %s", scenario, db.deadLetterReasons(5))
                .isZero();
        soft.assertThat(db.unfinished()).as("%s: messages left in the outbox", scenario).isZero();
        soft.assertAll();
    }

    /** min, median, max and every value of a list of figures (the fault-figures JSON shape). */
    static Map<String, Object> summary(List<Long> values) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("measured", values.size());
        if (values.isEmpty()) {
            return s;
        }
        List<Long> sorted = values.stream().sorted().toList();
        s.put("min", sorted.get(0));
        s.put("median", sorted.get(sorted.size() / 2));
        s.put("max", sorted.get(sorted.size() - 1));
        s.put("values", values);
        return s;
    }

    /** Asserts a step of the drill happened (a precondition, not the verdict). */
    static void require(boolean condition, String what) {
        assertThat(condition).as(what).isTrue();
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
