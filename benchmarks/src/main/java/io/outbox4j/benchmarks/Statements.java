package io.outbox4j.benchmarks;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Server-side cost of each statement a scenario ran, from {@code pg_stat_statements} when the
 * server has it loaded ({@code shared_preload_libraries = 'pg_stat_statements'}; the test-services
 * server does not, an external one given by {@code OUTBOX4J_POSTGRES_URL} may): calls, how many of
 * them were planned and the mean planning time (when the server also sets {@code
 * pg_stat_statements.track_planning = on}), mean execution time. It tells a statement shape that is
 * re-planned on every call, or that costs more to run, from time lost in the JVM. Without the
 * extension every method does nothing.
 */
final class Statements {
    private final Env env;
    private boolean available;

    private Statements(Env env, boolean available) {
        this.env = env;
        this.available = available;
    }

    /**
     * Enables the statistics for this run if the server can give them.
     *
     * @param env the environment
     * @return the probe (inert when the extension is not loaded)
     */
    static Statements probe(Env env) {
        try (Connection c = env.pool().getConnection();
                Statement st = c.createStatement()) {
            try (ResultSet rs =
                    st.executeQuery(
                            "SELECT 1 FROM pg_settings WHERE name = 'shared_preload_libraries'"
                                    + " AND setting LIKE '%pg_stat_statements%'")) {
                if (!rs.next()) {
                    return new Statements(env, false);
                }
            }
            st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            return new Statements(env, true);
        } catch (SQLException | RuntimeException e) {
            return new Statements(env, false);
        }
    }

    boolean available() {
        return available;
    }

    /** Forgets what was counted so far (call before a scenario). */
    void reset() {
        if (available) {
            try {
                env.execute("SELECT pg_stat_statements_reset()");
            } catch (IllegalStateException e) {
                available = false;
            }
        }
    }

    /**
     * Adds one note per statement that ran at least {@code minCalls} times in the benchmark
     * database since the last {@link #reset()}, the costliest first.
     *
     * @param r the result to annotate
     * @param minCalls the fewest calls worth reporting
     */
    void report(Result r, int minCalls) {
        if (!available) {
            return;
        }
        String sql =
                "SELECT calls, plans, mean_plan_time, mean_exec_time, rows, query FROM pg_stat_statements"
                        + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND calls >= "
                        + minCalls
                        + " AND query NOT LIKE 'SELECT pg_stat_statements%'"
                        + " ORDER BY total_plan_time + total_exec_time DESC LIMIT 8";
        List<String> lines = new ArrayList<>();
        try (Connection c = env.pool().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                String query = rs.getString(6).replaceAll("\\s+", " ");
                lines.add(
                        String.format(
                                Locale.ROOT,
                                "pg_stat_statements: %d calls, planned %d times, plan %.3f ms +"
                                        + " execute %.3f ms mean, %.1f rows/call: %s",
                                rs.getLong(1),
                                rs.getLong(2),
                                rs.getDouble(3),
                                rs.getDouble(4),
                                rs.getLong(5) / (double) Math.max(1, rs.getLong(1)),
                                query.length() > 160 ? query.substring(0, 160) + "…" : query));
            }
        } catch (SQLException e) {
            lines.add("pg_stat_statements could not be read: " + e.getMessage());
        }
        lines.forEach(r::note);
    }
}
