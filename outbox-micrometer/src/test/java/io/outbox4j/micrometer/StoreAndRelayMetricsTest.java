package io.outbox4j.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.api.PermanentFailureException;
import io.outbox4j.api.Publisher;
import io.outbox4j.api.Release;
import io.outbox4j.api.RetryableFailureException;
import io.outbox4j.engine.Relay;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.tck.InMemoryOutboxStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * The store-call timers and the relay state gauges after a real relay run: a Jdbi store on H2, a
 * publisher that publishes most messages, retries one and rejects one, and a store that fails its
 * claims for a while. The whole meter list of the run is written to {@code target/meter-list.md}.
 */
class StoreAndRelayMetricsTest {
    private final MeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void timesEveryStoreCall_andFollowsTheRelayState() throws Exception {
        Jdbi jdbi = h2("micrometer-store-calls");
        JdbiOutboxStore store = h2Store(jdbi);
        FailingClaims failing = new FailingClaims(store);
        AtomicBoolean retried = new AtomicBoolean();
        Publisher publisher =
                Publisher.perMessage(
                        m -> {
                            if (m.id().equals("reject")) {
                                throw new PermanentFailureException("schema mismatch");
                            }
                            if (m.id().equals("retry") && retried.compareAndSet(false, true)) {
                                throw new RetryableFailureException("broker busy");
                            }
                        });
        OutboxMetrics metrics =
                OutboxMetrics.builder(registry)
                        .admin(store)
                        .statisticsInterval(Duration.ZERO)
                        .tags(Tags.of("outbox", "orders"))
                        .build();
        Relay relay =
                Relay.builder(metrics.store(failing), publisher)
                        .observer(metrics)
                        .pollInterval(Duration.ofMillis(50))
                        .backoff(attempt -> Duration.ofMillis(10))
                        .build();
        metrics.relay(relay);
        assertThat(state("not_started")).isEqualTo(1);
        assertThat(state("running")).isZero();

        relay.start();
        List<Message> messages = new ArrayList<>();
        IntStream.range(0, 40).forEach(i -> messages.add(order("o-" + i, "k-" + (i % 4))));
        messages.add(order("retry", null));
        messages.add(order("reject", null));
        jdbi.useTransaction(h -> store.enqueueAll(h, messages));
        relay.wakeUp();
        await("41 completions", () -> messagesOf("complete") >= 41);
        await("one dead letter", () -> calls("dead_letter", "ok") >= 1);
        assertThat(state("running")).isEqualTo(1);
        assertThat(state("not_started")).isZero();

        assertThat(calls("claim", "ok")).as("claims timed").isGreaterThanOrEqualTo(1);
        assertThat(messagesOf("claim") - messagesOf("abandon"))
                .as("42 tried once, the retried one twice (claims given back untried aside)")
                .isEqualTo(43);
        assertThat(messagesOf("complete")).isEqualTo(41);
        assertThat(calls("release", "ok")).as("the retried message, released once").isEqualTo(1);
        assertThat(calls("dead_letter", "ok")).as("the rejected message").isEqualTo(1);
        assertThat(calls("claim", "error")).isZero();
        Timer claims = timer("claim", "ok");
        assertThat(claims.totalTime(TimeUnit.NANOSECONDS)).isPositive();
        TimeGauge age = registry.get(OutboxMetrics.RELAY_LAST_CLAIM_AGE).timeGauge();
        assertThat(age.value(TimeUnit.SECONDS))
                .as("a running relay claimed within its poll interval (and the await)")
                .isLessThan(5);

        failing.down.set(true);
        await("the state gauge says failing", () -> state("failing") == 1);
        assertThat(state("running")).isZero();
        await("failed claims timed as errors", () -> calls("claim", "error") >= 1);
        failing.down.set(false);
        await("running again", () -> state("running") == 1);

        metrics.refresh();
        writeMeterList(registry, Path.of("target", "meter-list.md"));

        relay.close();
        assertThat(state("stopped")).isEqualTo(1);
        assertThat(state("running")).isZero();
        metrics.close();
        assertThat(registry.getMeters()).as("close removes every meter").isEmpty();
    }

    @Test
    void oneRelayPerBinder_andNoNulls() {
        OutboxMetrics metrics = OutboxMetrics.builder(registry).build();
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(Jdbi.create("jdbc:h2:mem:micrometer-one-relay")).build();
        Relay relay = Relay.builder(store, Publisher.perMessage(m -> {})).build();
        metrics.relay(relay);
        assertThatThrownBy(() -> metrics.relay(relay))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already bound");
        Relay second = Relay.builder(store, Publisher.perMessage(m -> {})).build();
        assertThatThrownBy(() -> metrics.relay(second))
                .as("the first relay has not stopped")
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already bound");
        relay.close();
        metrics.relay(second); // a restart: the gauges read the new relay
        assertThat(
                        registry.get(OutboxMetrics.RELAY_STATE)
                                .tag("state", "not_started")
                                .gauge()
                                .value())
                .isEqualTo(1);
        second.close();
        assertThatThrownBy(() -> metrics.store(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("store must not be null");
        assertThatThrownBy(() -> OutboxMetrics.builder(registry).tags(Tags.of("operation", "x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'operation'");
        OutboxStore timed = metrics.store(store);
        assertThat(metrics.store(timed).toString())
                .as("wrapping a wrapper times once")
                .isEqualTo(timed.toString());
        relay.close();
        metrics.close();
    }

    @Test
    void theTimedStoreOfAStoreThatWakesRelays_stillWakesThem() throws Exception {
        OutboxMetrics metrics = OutboxMetrics.builder(registry).build();
        InMemoryOutboxStore store = new InMemoryOutboxStore();
        OutboxStore timed = metrics.store(store);
        assertThat(timed)
                .as("the timed store keeps the store's wake-ups and membership")
                .isInstanceOf(OutboxWakeUps.class)
                .isInstanceOf(io.outbox4j.api.OutboxMembership.class);
        AtomicInteger woken = new AtomicInteger();
        try (OutboxWakeUps.Listening listening =
                ((OutboxWakeUps) timed).listen(woken::incrementAndGet)) {
            store.enqueueCommitted(List.of(order("w-1", "k")));
            await("a wake-up after the commit", () -> woken.get() > 0);
        }
        metrics.close();
    }

    @Test
    void aRelayOnTheTimedStore_isStillAMember_andTheBucketGaugesSaySo() throws Exception {
        OutboxMetrics metrics = OutboxMetrics.builder(registry).build();
        JdbiOutboxStore store = h2Store(h2("micrometer-members"));
        OutboxStore timed = metrics.store(store);
        assertThat(timed)
                .as("the timed store keeps the store's membership")
                .isInstanceOf(io.outbox4j.api.OutboxMembership.class);
        Relay relay =
                Relay.builder(timed, Publisher.perMessage(m -> {}))
                        .pollInterval(Duration.ofMillis(50))
                        .build();
        metrics.relay(relay);
        assertThat(registry.get(OutboxMetrics.RELAY_BUCKETS).gauge().value())
                .as("a relay that is not a member (yet) claims every bucket")
                .isEqualTo(256);
        relay.start();
        await("the relay joined", () -> relay.membership().isPresent());
        assertThat(registry.get(OutboxMetrics.RELAY_BUCKETS).gauge().value()).isEqualTo(256);
        assertThat(registry.get(OutboxMetrics.RELAY_MEMBERS).gauge().value()).isEqualTo(1);
        store.renew("another-relay", Duration.ofMinutes(1));
        await(
                "the relay renewed and sees two members",
                () -> registry.get(OutboxMetrics.RELAY_MEMBERS).gauge().value() == 2);
        assertThat(registry.get(OutboxMetrics.RELAY_BUCKETS).gauge().value())
                .as("it owns its share only")
                .isLessThan(256)
                .isEqualTo(relay.membership().orElseThrow().buckets().size());
        relay.close();
        metrics.close();
    }

    @Test
    void theHandoversCounterCountsTheBucketsTheRelaysRenewalsMoved() throws Exception {
        OutboxMetrics metrics = OutboxMetrics.builder(registry).build();
        JdbiOutboxStore store = h2Store(h2("micrometer-handovers"));
        Relay relay =
                Relay.builder(store, Publisher.perMessage(m -> {}))
                        .owner("relay-a")
                        .memberLease(Duration.ofMillis(600))
                        .pollInterval(Duration.ofMillis(50))
                        .build();
        metrics.relay(relay);
        relay.start();
        await("the relay joined", () -> relay.membership().isPresent());
        double joined = registry.get(OutboxMetrics.RELAY_HANDOVERS).functionCounter().count();
        assertThat(joined)
                .as("its first renewal gave it every bucket")
                .isEqualTo(256)
                .isEqualTo((double) relay.handovers());

        // another member joins and lapses: the relay's next renewal drops it and takes its buckets
        // back. relay-b renews until it holds its share (a renewal that finds the relay holding
        // the membership lock leaves the assignment to the relay's next renewal, which then moves
        // relay-b's share itself and counts that move too).
        Membership other = store.renew("relay-b", Duration.ofMillis(400));
        for (int i = 0; other.buckets().isEmpty() && i < 50; i++) {
            other = store.renew("relay-b", Duration.ofMillis(400));
        }
        int share = other.buckets().size();
        assertThat(share).as("relay-b's share of the buckets").isPositive();
        await(
                "the relay took relay-b's buckets back",
                () ->
                        relay.membership().orElseThrow().members().size() == 1
                                && relay.membership().orElseThrow().buckets().size() == 256
                                && registry.get(OutboxMetrics.RELAY_HANDOVERS)
                                                .functionCounter()
                                                .count()
                                        >= joined + share);
        assertThat(registry.get(OutboxMetrics.RELAY_HANDOVERS).functionCounter().count())
                .as("the counter is the relay's own count of the buckets its renewals moved")
                .isEqualTo((double) relay.handovers())
                .as("it counts at least the %d buckets taken back from relay-b", share)
                .isGreaterThanOrEqualTo(joined + share)
                .as("and at most those and the share it may have moved to relay-b first")
                .isLessThanOrEqualTo(joined + 2.0 * share);
        relay.close();
        metrics.close();
    }

    private double state(String state) {
        return registry.get(OutboxMetrics.RELAY_STATE).tags("state", state).gauge().value();
    }

    private Timer timer(String operation, String result) {
        return registry.get(OutboxMetrics.STORE_CALLS)
                .tags("operation", operation, "result", result)
                .timer();
    }

    private long calls(String operation, String result) {
        return timer(operation, result).count();
    }

    private double messagesOf(String operation) {
        DistributionSummary s =
                registry.get(OutboxMetrics.STORE_MESSAGES).tags("operation", operation).summary();
        return s.totalAmount();
    }

    private static void await(String what, BooleanSupplier condition) {
        Awaitility.await(what)
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(10))
                .until(condition::getAsBoolean);
    }

    /** An in-memory H2 database that lives until the JVM ends. */
    private static Jdbi h2(String database) {
        return Jdbi.create("jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1");
    }

    /** The store over an H2 database, its schema created. */
    private static JdbiOutboxStore h2Store(Jdbi jdbi) {
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        return store;
    }

    private static Message order(String id, String key) {
        Message.Builder b = Orders.order(id);
        return key == null ? b.build() : b.key(key).build();
    }

    /** Every meter of the run: name, type, tags, measurements; sorted. */
    static void writeMeterList(MeterRegistry registry, Path file) throws IOException {
        List<String> rows =
                registry.getMeters().stream()
                        .sorted(
                                Comparator.comparing((Meter m) -> m.getId().getName())
                                        .thenComparing(m -> m.getId().getTags().toString()))
                        .map(
                                m ->
                                        "| `"
                                                + m.getId().getName()
                                                + "` | "
                                                + m.getId()
                                                        .getType()
                                                        .name()
                                                        .toLowerCase(Locale.ROOT)
                                                + " | "
                                                + m.getId().getTags().stream()
                                                        .map(Tag::toString)
                                                        .map(
                                                                t ->
                                                                        t.replace("tag(", "")
                                                                                .replace(")", ""))
                                                        .collect(Collectors.joining(", "))
                                                + " | "
                                                + measurements(m)
                                                + " |")
                        .toList();
        Files.createDirectories(file.getParent());
        Files.writeString(
                file,
                "| meter | type | tags | value |\n|---|---|---|---|\n"
                        + String.join("\n", rows)
                        + "\n");
    }

    private static String measurements(Meter m) {
        List<String> parts = new ArrayList<>();
        for (Measurement x : m.measure()) {
            double v = x.getValue();
            parts.add(
                    x.getStatistic().name().toLowerCase(Locale.ROOT)
                            + "="
                            + (v == Math.rint(v)
                                    ? String.valueOf((long) v)
                                    : String.format("%.4f", v)));
        }
        return String.join(" ", parts);
    }

    /** Fails every claim while {@code down} is set, as an unreachable database would. */
    private static final class FailingClaims implements OutboxStore {
        final AtomicBoolean down = new AtomicBoolean();
        private final OutboxStore store;

        FailingClaims(OutboxStore store) {
            this.store = store;
        }

        @Override
        public List<Delivery> claim(ClaimRequest request) {
            if (down.get()) {
                throw new IllegalStateException("database unreachable");
            }
            return store.claim(request);
        }

        @Override
        public Set<String> complete(Completion completion) {
            return store.complete(completion);
        }

        @Override
        public boolean release(Release release) {
            return store.release(release);
        }

        @Override
        public boolean deadLetter(DeadLetter deadLetter) {
            return store.deadLetter(deadLetter);
        }

        @Override
        public Set<String> extend(Extension extension) {
            return store.extend(extension);
        }

        @Override
        public Set<String> abandon(Abandonment abandonment) {
            return store.abandon(abandonment);
        }
    }
}
