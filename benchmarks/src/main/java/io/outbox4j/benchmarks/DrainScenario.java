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
                .figure("hand_msgs_per_s", "hand-written loop (median)", hand, "msg/s")
                .figure(
                        "relay_claim_p50_ms",
                        "relay claim() p50",
                        relaySide.claims.percentileMs(50),
                        "ms")
                .figure(
                        "hand_claim_p50_ms",
                        "hand-written claim p50",
                        handSide.claims.percentileMs(50),
                        "ms")
                .figure(
                        "relay_complete_p50_ms",
                        "relay complete() p50",
                        relaySide.completes.percentileMs(50),
                        "ms")
                .figure(
                        "hand_delete_p50_ms",
                        "hand-written delete p50",
                        handSide.completes.percentileMs(50),
                        "ms")
                .figure(
                        "relay_claim_p99_ms",
                        "relay claim() p99",
                        relaySide.claims.percentileMs(99),
                        "ms")
                .figure(
                        "hand_claim_p99_ms",
                        "hand-written claim p99",
                        handSide.claims.percentileMs(99),
                        "ms");
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

    static List<Long> rounded(List<Double> values) {
        List<Long> l = new ArrayList<>();
        values.forEach(v -> l.add(Math.round(v)));
        return l;
    }
}
