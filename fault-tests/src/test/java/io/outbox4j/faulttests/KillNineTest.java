package io.outbox4j.faulttests;

import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, drill 3: the relay runs in a child JVM that is killed with SIGKILL at a random moment
 * of its work (after a random number of claimed deliveries plus a random pause, as soon as it holds
 * leases), ten times, a new child started after each kill; a last child finishes the backlog.
 */
class KillNineTest {
    private static final int KILLS = 10;

    @Test
    void
            relayJvmKilledWithSigkillTenTimesAtRandomMoments_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        try (Drill d = Drill.start("kill_9", 4000, 50, RelaySettings.drill())) {
            int killedHoldingLeases = 0;
            for (int k = 1; k <= KILLS; k++) {
                ChildRelay child = d.childRelay("relay-" + k);
                child.awaitClaimed(1 + random.nextInt(250), Duration.ofSeconds(90));
                Thread.sleep(random.nextInt(200));
                String killed = child.name();
                Drill.Fault f = d.killNine(child, by -> !by.equals(killed));
                if (!f.leasedIds().isEmpty()) {
                    killedHoldingLeases++;
                }
                f.figures().put("aliveMillis", f.atMillis() - child.startedAtMillis());
            }
            ChildRelay last = d.childRelay("relay-last");
            boolean drained = d.awaitDrained(Duration.ofMinutes(3));
            int exit = last.stop(Duration.ofSeconds(20));

            Map<String, Object> extra =
                    Drill.figures(
                            "from SIGKILL to the first publish by another relay of a message the killed"
                                    + " relay had leased");
            extra.put("killsWhileHoldingLeases", killedHoldingLeases);
            extra.put("lastRelayExitCode", exit);
            extra.put("seed", seed);
            extra.put("drainedInTime", drained);
            d.report(extra);
            Drill.require(
                    killedHoldingLeases >= KILLS / 2,
                    "most kills ("
                            + killedHoldingLeases
                            + " of "
                            + KILLS
                            + ") hit a relay holding leases");
            d.verify();
        }
    }
}
