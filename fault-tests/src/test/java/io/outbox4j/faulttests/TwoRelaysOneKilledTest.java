package io.outbox4j.faulttests;

import io.outbox4j.testservices.PostgresServer;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, drill 4: two relays, each in its own JVM, share one outbox; one is killed with SIGKILL
 * mid-work and the other finishes alone.
 *
 * <p>A {@link PacedWriter} enqueues a backlog of 500 and then 200 messages a second, so both relays
 * find work for as long as the drill lasts: a backlog of the whole load was drained by whichever
 * relay's JVM came up first before the other had claimed anything (one relay drains 3 000 messages
 * in about two seconds here), and the drill's wait for the other's claims ran out. relay-b starts
 * once relay-a has claimed its share.
 */
class TwoRelaysOneKilledTest {
    @Test
    void
            twoRelayJvmsShareTheOutbox_oneKilledMidWork_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        try (Drill d =
                        new Drill(
                                "two_relays_one_killed",
                                3000,
                                50,
                                RelaySettings.drill(),
                                PostgresServer.shared(),
                                KafkaSink::open);
                PacedWriter writer = new PacedWriter(d.db, d.load, 500, 200).start()) {
            ChildRelay a = d.childRelay("relay-a");
            a.awaitClaimed(50 + random.nextInt(200), Duration.ofSeconds(90));
            ChildRelay b = d.childRelay("relay-b");
            b.awaitClaimed(1, Duration.ofSeconds(90));
            Thread.sleep(random.nextInt(300));
            Drill.Fault kill = d.killNine(a, "relay-b"::equals);
            kill.figures().put("survivorClaimedBeforeKill", b.journal().claimed());
            writer.finish();

            boolean drained = d.awaitDrained(Duration.ofMinutes(3));
            int exit = b.stop(Duration.ofSeconds(20));

            Map<String, Object> extra =
                    Drill.figures(
                            "from SIGKILL of relay-a to the first publish by relay-b of a message relay-a"
                                    + " had leased");
            extra.put("survivorClaimed", b.journal().claimed());
            extra.put("survivorExitCode", exit);
            extra.put("seed", seed);
            extra.put("drainedInTime", drained);
            d.report(extra);
            Drill.require(!kill.leasedIds().isEmpty(), "relay-a held leases when it was killed");
            d.verify();
        }
    }
}
