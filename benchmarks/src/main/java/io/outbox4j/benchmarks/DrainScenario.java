package io.outbox4j.benchmarks;

import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.util.ArrayList;
import java.util.List;

/**
 * Drain ceiling: preload N messages, drain them with the relay and a no-op publisher; beside it, a
 * hand-written JDBC claim/delete loop on a table of the same shape, same claim statement shape and
 * batch size. Rounds alternate which side goes first; the median rate of each side is reported.
 */
final class DrainScenario {
    static final String SUBJECT = "drain_outbox";
    static final String HAND = "drain_hand";

    private DrainScenario() {}

    static Result run(Env env) {
        Options o = env.options;
        int n = o.size("drain-messages");
        int batch = o.size("batch");
        int payload = o.size("payload");
        int rounds = o.size("rounds");
        Result r =
                new Result(
                                "drain",
                                "Drain ceiling: relay + no-op publisher vs hand-written JDBC claim/delete loop")
                        .config("messages", n)
                        .config("payload_bytes", payload)
                        .config("hand_batch", batch)
                        .config("relay", Drains.relaySettings())
                        .config("rounds", rounds)
                        .config("publisher", "no-op");
        JdbiOutboxStore store = env.store(SUBJECT);
        env.handTable(HAND, SUBJECT);

        int warm = Math.min(o.size("warmup-messages"), n);
        Drains.Comparison c =
                Drains.sideBySide(
                        env,
                        "drain",
                        store,
                        SUBJECT,
                        HAND,
                        new Instruments.NoopPublisher(),
                        rows -> {},
                        n,
                        warm,
                        batch,
                        payload,
                        rounds,
                        List.of());
        List<Double> relayRates = c.relayRates;
        List<Double> handRates = c.handRates;
        Drains.Breakdown relaySide = c.relaySide;
        Drains.Breakdown handSide = c.handSide;
        double relay = Stats.median(relayRates);
        double hand = Stats.median(handRates);
        r.figure("relay_msgs_per_s", "outbox4j relay (median)", relay, "msg/s")
                .figure("hand_msgs_per_s", "hand-written loop (median)", hand, "msg/s");
        percentile(r, "relay_claim", "relay claim()", relaySide.claims, 50);
        percentile(r, "hand_claim", "hand-written claim", handSide.claims, 50);
        percentile(r, "relay_complete", "relay complete()", relaySide.completes, 50);
        percentile(r, "hand_delete", "hand-written delete", handSide.completes, 50);
        percentile(r, "relay_claim", "relay claim()", relaySide.claims, 99);
        percentile(r, "hand_claim", "hand-written claim", handSide.claims, 99);
        relaySide.report(r, "relay", "relay", "complete()");
        handSide.report(r, "hand", "hand-written", "delete");
        r.check(
                "relay / hand-written (median of rounds)",
                Stats.medianRatio(relayRates, handRates),
                ">=",
                1.0);
        r.config("relay_rates", rounded(relayRates)).config("hand_rates", rounded(handRates));
        r.headline(Result.fmt(relay) + " msg/s", Result.fmt(hand) + " msg/s (hand-written loop)");
        env.execute("DROP TABLE " + Env.q(SUBJECT) + ", " + Env.q(HAND));
        return r;
    }

    /** Adds a percentile of one side's statement timings, as figure {@code <key>_p<p>_ms}. */
    private static void percentile(Result r, String key, String label, Timings timings, int p) {
        r.figure(key + "_p" + p + "_ms", label + " p" + p, timings.percentileMs(p), "ms");
    }

    static List<Long> rounded(List<Double> values) {
        List<Long> l = new ArrayList<>();
        values.forEach(v -> l.add(Math.round(v)));
        return l;
    }
}
