package io.outbox4j.benchmarks;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs the outbox4j benchmarks against the {@code test-services} PostgreSQL and Kafka (or external
 * ones named by {@code OUTBOX4J_POSTGRES_*} / {@code OUTBOX4J_KAFKA_BOOTSTRAP}), each beside its
 * hand-written baseline, and reports figures and ratios. See {@code docs/benchmarks.md}.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am install -DskipTests
 * ./mvnw -q -pl benchmarks exec:exec -Dbenchmarks.args="--scenario all"
 * </pre>
 */
public final class Benchmarks {
    private Benchmarks() {}

    /**
     * Runs the benchmarks and exits: 0 when every scenario ran, 1 when one failed, 2 on bad
     * arguments.
     *
     * @param args see {@link Options#usage()}
     */
    public static void main(String[] args) {
        int status;
        try {
            run(args, System.out);
            status = 0;
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            status = 2;
        } catch (RuntimeException | Error e) {
            e.printStackTrace();
            status = 1;
        }
        System.out.flush();
        // the in-JVM servers run non-daemon threads; their shutdown hooks stop them
        System.exit(status);
    }

    /**
     * Runs the selected scenarios, prints their tables, appends their JSON lines and, for full-size
     * runs, refreshes the results table of the docs.
     *
     * @param args the command line
     * @param out where to print
     * @return the results, in run order
     * @throws IllegalStateException if a scenario failed (after the others ran)
     */
    static List<Result> run(String[] args, PrintStream out) {
        Options options = Options.parse(args);
        List<Result> results = new ArrayList<>();
        Map<String, RuntimeException> failures = new LinkedHashMap<>();
        try (Env env = new Env(options, out)) {
            env.pool();
            Map<String, Object> machine = env.machine();
            env.log(
                    "machine: "
                            + Report.machineLine(machine)
                            + "; commit "
                            + machine.get("commit")
                            + ", load average "
                            + machine.get("load_average_at_start"));
            if (options.quick
                    && (options.scenarios.contains("latency")
                            || options.scenarios.contains("e2e")
                            || options.scenarios.contains("scale"))) {
                env.startKafkaInBackground();
            }
            Statements statements = Statements.probe(env);
            env.log(
                    "pg_stat_statements: "
                            + (statements.available()
                                    ? "on, reported per scenario"
                                    : "not loaded on this server (statement-level figures are left out)"));
            env.log(
                    "scenarios "
                            + options.scenarios
                            + (options.quick ? " (quick sizes)" : "")
                            + "; results to "
                            + options.out.toAbsolutePath().normalize());
            for (String scenario : options.scenarios) {
                long t0 = System.nanoTime();
                env.log("== " + scenario + " ==");
                Result r;
                statements.reset();
                try {
                    r = scenario(scenario, env);
                } catch (RuntimeException e) {
                    env.log(scenario + " FAILED: " + e);
                    e.printStackTrace(out);
                    failures.put(scenario, e);
                    continue;
                }
                statements.report(r, 50);
                r.config("quick", options.quick)
                        .config("seconds", Math.round((System.nanoTime() - t0) / 1e9))
                        .config("load_average_at_end", Env.loadAverage());
                r.print(out);
                Map<String, Object> now = env.machine();
                Report.appendJson(options.out, r.toJson(now, options.quick));
                if (!options.quick) {
                    Report.writeFragment(options.out, r, now);
                }
                results.add(r);
            }
            Report.summary(results, out);
            if (!options.quick && !results.isEmpty()) {
                Report.updateDocs(options.out, options.docs, out);
            }
        }
        if (!failures.isEmpty()) {
            IllegalStateException e =
                    new IllegalStateException("scenario(s) failed: " + failures.keySet());
            failures.values().forEach(e::addSuppressed);
            throw e;
        }
        return results;
    }

    private static Result scenario(String name, Env env) {
        return switch (name) {
            case "drain" -> DrainScenario.run(env);
            case "write" -> WriteScenario.run(env);
            case "backlog" -> BacklogScenario.run(env);
            case "memory" -> MemoryScenario.run(env);
            case "latency" -> LatencyScenario.run(env);
            case "e2e" -> EndToEndScenario.run(env);
            case "scale" -> ScaleScenario.run(env);
            case "scale-io" -> ScaleIoScenario.run(env);
            default -> throw new IllegalArgumentException("unknown scenario " + name);
        };
    }
}
