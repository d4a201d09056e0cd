package io.outbox4j.benchmarks;

import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Backlog flatness: the same number of messages drained by the relay (no-op publisher) from a small
 * backlog and from a large one that also holds dead-lettered history (older than every pending row,
 * so in front of the claim path if an index does not exclude it). Reports drain rate and
 * claim-statement p99 of each, and their ratios.
 */
final class BacklogScenario {
    static final String SMALL = "backlog_small";
    static final String LARGE = "backlog_large";

    private BacklogScenario() {}

    static Result run(Env env) {
        Options o = env.options;
        int small = o.size("backlog-small");
        int large = o.size("backlog-large");
        int dead = o.size("backlog-dead");
        int drain = Math.min(o.size("backlog-drain"), small);
        int batch = o.size("batch");
        int payload = o.size("payload");
        int rounds = o.size("rounds");
        Result r =
                new Result(
                                "backlog",
                                "Backlog flatness: drain "
                                        + drain
                                        + " from "
                                        + small
                                        + " vs "
                                        + large
                                        + " pending (+ "
                                        + dead
                                        + " dead)")
                        .config("small_pending", small)
                        .config("large_pending", large)
                        .config("large_dead", dead)
                        .config("drained_per_round", drain)
                        .config("relay", Drains.relaySettings())
                        .config("payload_bytes", payload)
                        .config("rounds", rounds)
                        .config("publisher", "no-op");
        JdbiOutboxStore smallStore = env.store(SMALL);
        JdbiOutboxStore largeStore = env.store(LARGE);
        long t0 = System.nanoTime();
        env.log("backlog: loading " + dead + " dead + " + large + " pending rows");
        env.load(LARGE, "d-", dead, payload, true);
        env.load(LARGE, "p-", large, payload, false);
        env.settle(LARGE);
        env.log(
                String.format(
                        Locale.ROOT,
                        "backlog: loaded in %.1f s; table %s",
                        (System.nanoTime() - t0) / 1e9,
                        env.queryText(
                                        "SELECT pg_size_pretty(pg_total_relation_size('"
                                                + LARGE
                                                + "'))")
                                .strip()));
        r.config("large_plan", plan(env, LARGE));

        // warm-up on both
        int warm = Math.min(drain, Math.max(batch * 5, drain / 5));
        env.load(SMALL, "w-", warm, payload, false);
        Drains.relay(env, smallStore, new Instruments.NoopPublisher(), warm);
        Drains.relay(env, largeStore, new Instruments.NoopPublisher(), warm);

        List<Double> smallRates = new ArrayList<>();
        List<Double> largeRates = new ArrayList<>();
        Timings smallClaims = new Timings();
        Timings largeClaims = new Timings();
        for (int round = 1; round <= rounds; round++) {
            env.execute("TRUNCATE " + Env.q(SMALL));
            env.load(SMALL, "r" + round + "-", small, payload, false);
            env.settle(SMALL, LARGE);
            boolean largeFirst = round % 2 == 1;
            for (int side = 0; side < 2; side++) {
                boolean isLarge = (side == 0) == largeFirst;
                Drains.Run run =
                        Drains.relay(
                                env,
                                isLarge ? largeStore : smallStore,
                                new Instruments.NoopPublisher(),
                                drain);
                (isLarge ? largeRates : smallRates).add(run.rate());
                (isLarge ? largeClaims : smallClaims).addAll(run.claims());
                env.log(
                        String.format(
                                Locale.ROOT,
                                "backlog round %d: %-6s %,9.0f msg/s, claim p99 %.2f ms",
                                round,
                                isLarge ? "large" : "small",
                                run.rate(),
                                run.claims().percentileMs(99)));
            }
        }
        double sr = Stats.median(smallRates);
        double lr = Stats.median(largeRates);
        double sp = smallClaims.percentileMs(99);
        double lp = largeClaims.percentileMs(99);
        r.figure("small_msgs_per_s", small + " pending: drain (median)", sr, "msg/s")
                .figure(
                        "large_msgs_per_s",
                        large + " pending + " + dead + " dead: drain (median)",
                        lr,
                        "msg/s")
                .figure(
                        "small_claim_p50_ms",
                        small + " pending: claim() p50",
                        smallClaims.percentileMs(50),
                        "ms")
                .figure(
                        "large_claim_p50_ms",
                        large + " pending: claim() p50",
                        largeClaims.percentileMs(50),
                        "ms")
                .figure("small_claim_p99_ms", small + " pending: claim() p99", sp, "ms")
                .figure("large_claim_p99_ms", large + " pending: claim() p99", lp, "ms")
                .check(
                        "drain rate large / small (median of rounds)",
                        Stats.medianRatio(largeRates, smallRates),
                        ">=",
                        0.9)
                .check("claim p99 small / large", sp / lp, ">=", 0.9);
        r.config("small_rates", DrainScenario.rounded(smallRates))
                .config("large_rates", DrainScenario.rounded(largeRates));
        r.headline(
                Result.fmt(lr) + " msg/s, claim p99 " + Result.fmt(lp) + " ms (large)",
                Result.fmt(sr) + " msg/s, claim p99 " + Result.fmt(sp) + " ms (small)");
        env.execute("DROP TABLE " + Env.q(SMALL) + ", " + Env.q(LARGE));
        return r;
    }

    /**
     * Shows how PostgreSQL runs the store's claim selection on a table (read-only: the locking
     * sub-select, as EXPLAIN without ANALYZE), to tell an index range scan from a walk over the
     * whole table.
     */
    static String plan(Env env, String table) {
        String text =
                env.queryText(
                        "EXPLAIN SELECT id FROM "
                                + Env.q(table)
                                + " WHERE dead_at IS NULL AND available_at <= now() ORDER BY available_at, seq LIMIT 100"
                                + " FOR UPDATE SKIP LOCKED");
        return text.strip().replaceAll("\\s*\\n\\s*", " | ");
    }
}
