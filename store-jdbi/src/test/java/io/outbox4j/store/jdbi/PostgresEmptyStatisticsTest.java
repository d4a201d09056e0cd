package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.Query;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An outbox is often analysed while (nearly) empty: autovacuum finds it drained, records no rows,
 * and cannot give back its pages while relays keep using it. When a burst arrives, the planner
 * still believes the table empty until the next auto-analyze (a minute or more). With those
 * statistics the claim once joined its page to the whole table as a nested loop (1.4 s to lease 500
 * of 20 000 rows) and a keyed completion walked the whole table once per key to unpark (5.4 s); the
 * scale benchmark saw relays drain at 300 msg/s instead of 10 000. Asserted on {@code EXPLAIN
 * ANALYZE} of the real statements: rows are reached by primary key only for the rows named.
 */
class PostgresEmptyStatisticsTest {
    private static final String TABLE = "outbox_empty_stats";
    private static final int ROWS = 20_000;
    private static final int LIMIT = 500;

    /** An index scan of the primary key, with what it returned: {@code rows=N loops=L}. */
    private static final Pattern PKEY_SCAN =
            Pattern.compile(TABLE + "_pkey on " + TABLE + ".*rows=(\\d+) loops=(\\d+)");

    private static Jdbi jdbi;
    private static JdbiOutboxStore store;
    private static PostgresDialect sql;

    @BeforeAll
    static void analysedWhileEmpty_thenABurst() throws Exception {
        jdbi = Databases.postgres();
        store = Databases.createdStore(jdbi, TABLE);
        sql = (PostgresDialect) store.sql();
        Databases.onStatement(
                jdbi,
                st -> {
                    st.execute("TRUNCATE " + sql.table);
                    st.execute(insert("drained-", 2_000));
                    st.execute("DELETE FROM " + sql.table);
                    // what autovacuum leaves when it cannot take the lock to truncate: pages, no
                    // rows
                    st.execute("VACUUM (TRUNCATE false, ANALYZE) " + sql.table);
                    st.execute(insert("burst-", ROWS));
                });
        long[] stats =
                jdbi.withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT relpages, reltuples::bigint FROM pg_class"
                                                        + " WHERE relname = :t")
                                        .bind("t", TABLE)
                                        .map((rs, ctx) -> new long[] {rs.getLong(1), rs.getLong(2)})
                                        .one());
        assertThat(stats[0]).as("pages the statistics know of").isPositive();
        assertThat(stats[1]).as("rows the statistics know of").isZero();
    }

    /** One keyed message per key, due a day ago, in enqueue order. */
    private static String insert(String prefix, int rows) {
        return "INSERT INTO "
                + sql.table
                + " (id, topic, msg_key, module, content_type, payload, headers, occurred_at,"
                + " enqueued_at, available_at)"
                + " SELECT '"
                + prefix
                + "' || g, 'orders', '"
                + prefix
                + "k' || g, 'stats', 'application/json', '\\x7b7d'::bytea, '',"
                + " now() - interval '1 day', now() - interval '1 day',"
                + " now() - interval '1 day' + g * interval '1 microsecond'"
                + " FROM generate_series(1, "
                + rows
                + ") AS g";
    }

    private static String explain(String statement, UnaryOperator<Query> bind) {
        return Databases.explainPostgres(jdbi, "ANALYZE, COSTS OFF", statement, bind);
    }

    /** Every primary-key scan of the plan returned at most {@code most} rows in all its loops. */
    private static void assertPrimaryKeyReadsAtMost(String plan, int most) {
        Matcher m = PKEY_SCAN.matcher(plan);
        int scans = 0;
        while (m.find()) {
            scans++;
            assertThat(Long.parseLong(m.group(1)) * Long.parseLong(m.group(2)))
                    .as(
                            "rows read through the primary key (the table has %d), plan:\n%s",
                            ROWS, plan)
                    .isLessThanOrEqualTo(most);
        }
        assertThat(scans).as("primary-key scans in the plan:\n%s", plan).isPositive();
    }

    @Test
    void claim_leasesItsPageByPrimaryKey_notByJoiningTheWholeTable() {
        Instant now = Instant.now();
        String plan =
                explain(
                        sql.claimFree,
                        q ->
                                q.bind("now", sql.time(now))
                                        .bind("limit", LIMIT)
                                        .bind("until", sql.time(now.plusSeconds(60)))
                                        .bind("owner", "relay")
                                        .bind("token", "00000000-0000-0000-0000-000000000000"));
        assertThat(plan).as("plan:\n%s", plan).contains("Update on " + TABLE);
        assertPrimaryKeyReadsAtMost(plan, LIMIT);
    }

    /**
     * Relays poll an empty outbox for a while, as prepared statements: PostgreSQL soon plans the
     * claim once, generically, for a table that is empty, and keeps that plan for the connection
     * while a burst fills the table (until the next analyze invalidates it). The plan must still
     * read only what a claim needs. Before the fix it sorted the whole burst and probed every row's
     * predecessor with a scan of the table (in the scale benchmark: 21 s and 17.8 M buffers for a
     * claim over 20 000 rows, holding the claim lock; here ~10 s before it was stopped).
     */
    @Test
    void claim_plannedWhileTheTableWasEmpty_readsOnlyWhatItClaims() throws Exception {
        String plan =
                plannedWhileEmpty(
                        "outbox_planned_empty",
                        (dialect, h) -> dialect.beginClaim(h),
                        dialect -> dialect.claimFree,
                        // parameters in order of first use: owner, now, limit, until, token
                        "('relay', now(), " + LIMIT + ", now() + interval '1 minute', 'token')");
        assertThat(plan).as("plan:\n%s", plan).contains("Update on outbox_planned_empty");
        assertBuffersAtMost(plan, 20L * LIMIT);
    }

    /**
     * The completion of unkeyed messages and the renewal of leases run outside the claim lock, as
     * statements of their own: planned while the table was empty they scanned the whole table on
     * every call (1.5 ms over 20 000 rows, linear in the backlog). They take the same planner
     * settings along.
     */
    @Test
    void completionAndRenewal_plannedWhileTheTableWasEmpty_goThroughThePrimaryKey()
            throws Exception {
        String ids = "ARRAY['burst-1', 'burst-2']::varchar[]";
        String completion =
                plannedWhileEmpty(
                        "outbox_planned_empty_complete",
                        PostgresEmptyStatisticsTest::plannerSettings,
                        dialect -> dialect.deleteUnkeyed,
                        "('relay', 'token', " + ids + ")");
        String renewal =
                plannedWhileEmpty(
                        "outbox_planned_empty_extend",
                        PostgresEmptyStatisticsTest::plannerSettings,
                        dialect -> dialect.extend,
                        "(now(), " + ids + ", ARRAY['t1', 't2']::varchar[], 'relay')");
        for (String plan : List.of(completion, renewal)) {
            assertThat(plan).as("plan:\n%s", plan).doesNotContain("Seq Scan");
            assertBuffersAtMost(plan, 100);
        }
    }

    /** What the store sends with the statements it runs outside the claim lock. */
    private static void plannerSettings(PostgresDialect dialect, Handle h) throws SQLException {
        try (Statement st = h.getConnection().createStatement()) {
            st.execute("SELECT " + PostgresDialect.INDEX_PLANS);
        }
    }

    /** Prepares for a transaction whose statements are planned after it. */
    @FunctionalInterface
    private interface Setup {
        void run(PostgresDialect dialect, Handle h) throws SQLException;
    }

    /**
     * The plan of a statement prepared and first run (generic plan) while its table was empty, then
     * run with {@code arguments} after {@value #ROWS} rows arrived: {@code EXPLAIN (ANALYZE,
     * BUFFERS)} in a rolled-back transaction. Fails if it runs over 5 s.
     */
    private static String plannedWhileEmpty(
            String table,
            Setup setup,
            Function<PostgresDialect, String> statement,
            String arguments)
            throws Exception {
        PostgresDialect dialect = (PostgresDialect) Databases.createdStore(jdbi, table).sql();
        Databases.onStatement(
                jdbi,
                st -> {
                    st.execute("TRUNCATE " + dialect.table);
                    st.execute("VACUUM (ANALYZE) " + dialect.table);
                });
        String plan =
                jdbi.withHandle(
                        h -> {
                            h.begin();
                            try (Statement st = h.getConnection().createStatement()) {
                                st.execute("SET LOCAL plan_cache_mode = force_generic_plan");
                                st.execute("SET LOCAL statement_timeout = '5s'");
                                setup.run(dialect, h);
                                st.execute(
                                        "PREPARE planned_empty AS "
                                                + numbered(statement.apply(dialect)));
                                st.execute("EXECUTE planned_empty" + arguments);
                                st.execute(
                                        insert("burst-", ROWS).replace(sql.table, dialect.table));
                                StringBuilder out = new StringBuilder();
                                try (ResultSet rs =
                                        st.executeQuery(
                                                "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE"
                                                        + " planned_empty"
                                                        + arguments)) {
                                    while (rs.next()) {
                                        out.append(rs.getString(1)).append('\n');
                                    }
                                } catch (SQLException e) {
                                    if ("57014".equals(e.getSQLState())) {
                                        return null; // the statement timeout
                                    }
                                    throw e;
                                }
                                return out.toString();
                            } finally {
                                h.rollback();
                                try (Statement st = h.getConnection().createStatement()) {
                                    st.execute("DEALLOCATE ALL"); // PREPARE outlives a rollback
                                }
                            }
                        });
        assertThat(plan)
                .as(
                        "a statement planned while %s was empty, run over %d rows: over 5 s",
                        table, ROWS)
                .isNotNull();
        assertThat(plan).as("a generic plan:\n%s", plan).containsPattern("\\$\\d");
        return plan;
    }

    /** The whole statement read at most {@code most} buffers. */
    private static void assertBuffersAtMost(String plan, long most) {
        Matcher buffers = Pattern.compile("Buffers: shared hit=(\\d+)").matcher(plan);
        assertThat(buffers.find()).as("buffers in the plan:\n%s", plan).isTrue();
        assertThat(Long.parseLong(buffers.group(1)))
                .as("buffers read over %d rows, plan:\n%s", ROWS, plan)
                .isLessThanOrEqualTo(most);
    }

    /** A statement's {@code :named} parameters as {@code $1, $2, …} in order of first use. */
    private static String numbered(String named) {
        Map<String, Integer> numbers = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?<!:):([a-z]\\w*)").matcher(named);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            int n = numbers.computeIfAbsent(m.group(1), k -> numbers.size() + 1);
            m.appendReplacement(out, "\\$" + n);
        }
        m.appendTail(out);
        return out.toString();
    }

    @Test
    void keyedCompletion_unparksByPrimaryKey_notByWalkingTheWholeTable() {
        List<Delivery> claimed =
                store.claim(new ClaimRequest("relay", Instant.now(), Duration.ofMinutes(5), LIMIT));
        assertThat(claimed).hasSize(LIMIT);
        String token = claimed.get(0).receipt().substring(0, Receipt.TOKEN_LENGTH);
        List<String> ids = claimed.stream().map(d -> d.message().id()).toList();
        String plan =
                explain(
                        sql.completeKeyed,
                        q ->
                                q.bind("owner", "relay")
                                        .bind("token", token)
                                        .bindArray("ids", String.class, ids));
        assertThat(plan).as("plan:\n%s", plan).contains("Delete on " + TABLE);
        assertPrimaryKeyReadsAtMost(plan, LIMIT);
        assertThat(
                        store.complete(
                                new Completion(
                                        "relay", claimed.stream().map(Delivery::receipt).toList())))
                .as("stale receipts")
                .isEmpty();
    }
}
