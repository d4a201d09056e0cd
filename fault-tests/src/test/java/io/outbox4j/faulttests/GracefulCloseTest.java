package io.outbox4j.faulttests;

import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, drill 2: a relay is closed gracefully ({@code close()}, what SIGTERM does) while it has
 * messages in flight, and a new relay takes over; three times, then a last relay finishes the
 * backlog.
 */
class GracefulCloseTest {
    private static final int CLOSES = 3;

    @Test
    void
            relayClosedWithMessagesInFlight_thenANewRelayFinishes_losesNothing_andFirstPublishesEveryKeyInEnqueueOrder()
                    throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        try (Drill d = Drill.start("graceful_close", 3000, 50, RelaySettings.drill())) {
            boolean allInFlight = true;
            for (int i = 1; i <= CLOSES; i++) {
                Drill.LocalRelay relay = d.localRelay("relay-" + i);
                relay.relay().start();
                Drill.awaitClaimed(
                        relay.journal(), 150 + random.nextInt(300), Duration.ofSeconds(60));
                Set<String> leased = awaitInFlight(relay.journal(), Duration.ofSeconds(5));
                allInFlight &= !leased.isEmpty();
                long closeAt = System.currentTimeMillis();
                relay.close();
                long closedAt = System.currentTimeMillis();
                String closed = relay.name();
                Map<String, Object> f =
                        d.fault(
                                "graceful-close",
                                closed,
                                closeAt,
                                leased,
                                by -> !by.equals(closed));
                f.put("closeMillis", closedAt - closeAt);
                f.put("leasesStillHeldAfterClose", relay.journal().snapshot().leasedIds().size());
            }
            Drill.LocalRelay last = d.localRelay("relay-" + (CLOSES + 1));
            last.relay().start();
            boolean drained = d.awaitDrained(Duration.ofMinutes(3));
            last.close();

            Map<String, Object> extra =
                    Drill.figures(
                            "from close() to the first publish by another relay of a message the closed"
                                    + " relay had leased (none measured when the closed relay published all"
                                    + " of them itself)");
            extra.put("seed", seed);
            extra.put("drainedInTime", drained);
            d.report(extra);
            Drill.require(allInFlight, "every close() came while the relay held leases");
            d.verify();
        }
    }

    private static Set<String> awaitInFlight(LeaseJournal journal, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Set<String> leased = journal.snapshot().leasedIds();
        while (leased.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(1);
            leased = journal.snapshot().leasedIds();
        }
        return leased;
    }
}
