package io.outbox4j.faulttests;

import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.testservices.KafkaServer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, drill 1: the Kafka broker is stopped for several seconds while one relay works through
 * a backlog, then started again on the same address with its data.
 */
class BrokerOutageTest {
    private static final Duration DOWN = Duration.ofSeconds(6);

    @Test
    void brokerStoppedForSecondsMidRun_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
            throws Exception {
        KafkaServer kafka = Drill.broker();
        try (Drill d = Drill.start("broker_outage", 3000, 50, RelaySettings.drill())) {
            AtomicInteger released = new AtomicInteger();
            Observer countReleases =
                    o -> {
                        if (o.outcome() == Observation.Outcome.RELEASED) {
                            released.incrementAndGet();
                        }
                    };
            Drill.LocalRelay relay = d.localRelay("relay-1", countReleases);
            relay.relay().start();
            Drill.awaitPublished(d, 600, Duration.ofSeconds(60));

            int seenAtStop = d.ledger.distinct();
            long stopAt = System.currentTimeMillis();
            kafka.stop();
            long stoppedAt = System.currentTimeMillis();
            // the messages the relay leases (and fails to publish) while the broker is gone
            Set<String> leased = new HashSet<>();
            int releasedBefore = released.get();
            long restartAt = stopAt + DOWN.toMillis();
            while (System.currentTimeMillis() < restartAt) {
                leased.addAll(relay.journal().snapshot().leasedIds());
                Thread.sleep(10);
            }
            int releasedWhileDown = released.get() - releasedBefore;
            long startAt = System.currentTimeMillis();
            kafka.start();
            long backAt = System.currentTimeMillis();
            Map<String, Object> f =
                    d.fault("broker-stopped", relay.name(), startAt, leased, by -> true);
            f.put("brokerStopMillis", stoppedAt - stopAt);
            f.put("brokerDownMillis", startAt - stopAt);
            f.put("brokerStartMillis", backAt - startAt);
            f.put("releasedWhileDown", releasedWhileDown);

            boolean drained = d.awaitDrained(Duration.ofMinutes(3));
            relay.close();

            Map<String, Object> extra =
                    Drill.figures(
                            "from kafka.start() to the first publish of a message the relay held a lease"
                                    + " on while the broker was down");
            extra.put("drainedInTime", drained);
            d.report(extra);
            Drill.require(
                    seenAtStop < d.load.messages(),
                    "the broker was stopped mid-run (" + seenAtStop + " messages seen before)");
            Drill.require(
                    releasedWhileDown > 0,
                    "the relay kept working against the stopped broker (its publishes failed and"
                            + " were released)");
            d.verify();
        } finally {
            kafka.start();
        }
    }
}
