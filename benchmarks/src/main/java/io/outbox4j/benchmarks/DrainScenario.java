package io.outbox4j.benchmarks;

import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.util.ArrayList;
import java.util.List;

/**
 * Drain ceiling: preload N messages, drain them with the relay and a no-op publisher; beside it, a hand-written
 * JDBC claim/delete loop on a table of the same shape, same claim statement shape and batch size. Rounds
 * alternate which side goes first; the median rate of each side is reported.
 */
final class DrainScenario {
    static final String SUBJECT = "drain_outbox";
    static final String HAND = "drain_hand";

    private DrainScenario() {
    }

    static Result run(Env env) {
        Options o = env.options;
        int n = o.size("drain-messages");
        int batch = o.size("batch");
        int payload = o.size("payload");
        int rounds = o.size("rounds");
        Result r = new Result("drain", "Drain ceiling: relay + no-op publisher vs hand-written JDBC claim/delete loop")
                .config("messages", n).config("payload_bytes", payload).config("batch", batch)
                .config("relay_workers", 4).config("rounds", rounds).config("publisher", "no-op");
        JdbiOutboxStore store = env.store(SUBJECT);
        env.handTable(HAND, SUBJECT);

        int warm = Math.min(o.size("warmup-messages"), n);
        env.log("drain: warm-up with " + warm + " messages each side");
        env.load(SUBJECT, "w-", warm, payload, false);
        env.load(HAND, "w-", warm, payload, false);
        Drains.relay(env, store, new Instruments.NoopPublisher(), batch, warm);
        Drains.hand(env, HAND, batch, rows -> { });

        List<Double> relayRates = new ArrayList<>();
        List<Double> handRates = new ArrayList<>();
        Drains.Breakdown relaySide = new Drains.Breakdown();
        Drains.Breakdown handSide = new Drains.Breakdown();
        for (int round = 1; round <= rounds; round++) {
            env.execute("TRUNCATE " + Env.q(SUBJECT) + ", " + Env.q(HAND));
            env.load(SUBJECT, "r" + round + "-", n, payload, false);
            env.load(HAND, "r" + round + "-", n, payload, false);
            env.settle(SUBJECT, HAND);
            boolean relayFirst = round % 2 == 0;
            for (int side = 0; side < 2; side++) {
                if ((side == 0) == relayFirst) {
                    Drains.Run run = Drains.relay(env, store, new Instruments.NoopPublisher(), batch, n);
                    relayRates.add(run.rate());
                    relaySide.add(run);
                    env.log(String.format("drain round %d: relay        %,10.0f msg/s", round, run.rate()));
                } else {
                    Drains.Run run = Drains.hand(env, HAND, batch, rows -> { });
                    if (run.messages() != n) {
                        throw new IllegalStateException("hand-written loop drained " + run.messages() + " of " + n);
                    }
                    handRates.add(run.rate());
                    handSide.add(run);
                    env.log(String.format("drain round %d: hand-written %,10.0f msg/s", round, run.rate()));
                }
            }
            if (env.count(SUBJECT) != 0) {
                throw new IllegalStateException("relay left " + env.count(SUBJECT) + " rows in " + SUBJECT);
            }
        }
        double relay = Stats.median(relayRates);
        double hand = Stats.median(handRates);
        r.figure("relay_msgs_per_s", "outbox4j relay (median)", relay, "msg/s")
                .figure("hand_msgs_per_s", "hand-written loop (median)", hand, "msg/s")
                .figure("relay_claim_p50_ms", "relay claim() p50", relaySide.claims.percentileMs(50), "ms")
                .figure("hand_claim_p50_ms", "hand-written claim p50", handSide.claims.percentileMs(50), "ms")
                .figure("relay_complete_p50_ms", "relay complete() p50", relaySide.completes.percentileMs(50), "ms")
                .figure("hand_delete_p50_ms", "hand-written delete p50", handSide.completes.percentileMs(50), "ms")
                .figure("relay_claim_p99_ms", "relay claim() p99", relaySide.claims.percentileMs(99), "ms")
                .figure("hand_claim_p99_ms", "hand-written claim p99", handSide.claims.percentileMs(99), "ms");
        relaySide.report(r, "relay", "relay", "complete()");
        handSide.report(r, "hand", "hand-written", "delete");
        r.check("relay / hand-written (median of rounds)", Stats.medianRatio(relayRates, handRates), ">=", 0.8);
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
