package io.outbox4j.faulttests;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, drill 4: two relays, each in its own JVM, share one outbox; one is killed with SIGKILL
 * mid-work and the other finishes alone.
 */
class TwoRelaysOneKilledTest {
    @Test
    void
            twoRelayJvmsShareTheOutbox_oneKilledMidWork_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        try (Drill d = Drill.start("two_relays_one_killed", 3000, 50, RelaySettings.drill())) {
            ChildRelay a = d.childRelay("relay-a");
            ChildRelay b = d.childRelay("relay-b");
            a.awaitClaimed(50 + random.nextInt(200), Duration.ofSeconds(90));
            b.awaitClaimed(1, Duration.ofSeconds(90));
            Thread.sleep(random.nextInt(300));
            a.awaitHoldingLeases(Duration.ofSeconds(5));
            long killAt = a.kill();
            LeaseJournal.Snapshot journal = a.journal();
            Set<String> leased = journal.leasedIds();
            Map<String, Object> f = d.fault("kill-9", a.name(), killAt, leased, "relay-b"::equals);
            f.put("claimedBeforeKill", journal.claimed());
            f.put("survivorClaimedBeforeKill", b.journal().claimed());

            boolean drained = d.awaitDrained(Duration.ofSeconds(180));
            int exit = b.stop(Duration.ofSeconds(20));

            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put(
                    "recoveryMeans",
                    "from SIGKILL of relay-a to the first publish by relay-b of a message relay-a"
                            + " had leased");
            extra.put("survivorClaimed", b.journal().claimed());
            extra.put("survivorExitCode", exit);
            extra.put("seed", seed);
            extra.put("drainedInTime", drained);
            d.report(extra);
            Drill.require(!leased.isEmpty(), "relay-a held leases when it was killed");
            d.verify();
        }
    }
}
