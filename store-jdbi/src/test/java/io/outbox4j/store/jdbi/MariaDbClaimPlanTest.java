package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.Query;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The claim stays flat on MariaDB: with 200 000 pending rows over 2 000 keys and 20 000 blocked
 * keys (a dead head and two parked followers each, all due before every pending row), the claim's
 * read of ids (no locks) walks the claim index in claim order without a filesort and reads about
 * {@code limit} entries, its next page goes on from the last id the same way, the rows are locked
 * through the primary key, and each predecessor probe is one step of the key index. Asserted on
 * EXPLAIN and on the session's handler counters.
 */
class MariaDbClaimPlanTest {
    private static final String TABLE = "outbox_plan";
    private static final int PENDING = 200_000;
    private static final int KEYS = 2_000;
    private static final int BLOCKED_KEYS = 20_000;
    private static final int LIMIT = 100;

    private static Jdbi jdbi;
    private static JdbiOutboxStore store;
    private static MariaDbDialect sql;

    @BeforeAll
    static void loadTheBacklog() throws Exception {
        jdbi = Databases.mariaDb();
        store = Databases.createdStore(jdbi, TABLE);
        sql = (MariaDbDialect) store.sql();
        Databases.onStatement(jdbi, MariaDbClaimPlanTest::load);
    }

    /**
     * Loads the backlog into the emptied table without its secondary indexes, then builds them and
     * analyses the table.
     */
    private static void load(Statement st) throws SQLException {
        String[] indexes = {"claim_idx", "key_idx", "parked_idx", "dead_idx"};
        st.execute("TRUNCATE TABLE " + sql.table);
        // Loading without the secondary indexes and building them afterwards takes seconds.
        StringBuilder drop = new StringBuilder("ALTER TABLE " + sql.table);
        for (int i = 0; i < indexes.length; i++) {
            drop.append(i == 0 ? " " : ", ")
                    .append("DROP INDEX `" + TABLE + "_" + indexes[i] + "`");
        }
        st.execute(drop.toString());
        st.execute(
                "INSERT INTO "
                        + sql.table
                        + Databases.LOADED_COLUMNS
                        + " SELECT CONCAT('b', seq DIV 3, '-', seq MOD 3), 'orders',"
                        + " CONCAT('blocked-', seq DIV 3), 'plan', 'application/json', '{}', '',"
                        + " UTC_TIMESTAMP(6) - INTERVAL 2 HOUR, UTC_TIMESTAMP(6) - INTERVAL 2 HOUR,"
                        + " IF(seq MOD 3 = 0, NULL, UTC_TIMESTAMP(6) - INTERVAL 2 HOUR),"
                        + " seq MOD 3 > 0, IF(seq MOD 3 = 0, 5, 0),"
                        + " IF(seq MOD 3 = 0, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, NULL),"
                        + " IF(seq MOD 3 = 0, 'poison', NULL)"
                        + " FROM seq_3_to_"
                        + (3 * BLOCKED_KEYS + 2));
        st.execute(
                "INSERT INTO "
                        + sql.table
                        + Databases.LOADED_COLUMNS
                        + " SELECT CONCAT('p', seq), 'orders', CONCAT('k', seq MOD "
                        + KEYS
                        + "), 'plan', 'application/json', '{}', '',"
                        + " UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR,"
                        + " UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL seq MICROSECOND,"
                        + " FALSE, 0, NULL, NULL FROM seq_1_to_"
                        + PENDING);
        st.execute(
                "ALTER TABLE "
                        + sql.table
                        + " ADD KEY `outbox_plan_claim_idx` (parked, dead_at, available_at, seq),"
                        + " ADD KEY `outbox_plan_key_idx` (msg_key, seq),"
                        + " ADD KEY `outbox_plan_parked_idx` (parked, msg_key, seq),"
                        + " ADD KEY `outbox_plan_dead_idx` (dead_at, seq)");
        st.execute("ANALYZE TABLE " + sql.table);
    }

    /** EXPLAIN rows as {@code table key rows extra} lines. */
    private static String explain(
            Handle h, String statement, java.util.function.UnaryOperator<Query> bind) {
        Query q = bind.apply(h.createQuery("EXPLAIN " + statement));
        return String.join(
                "\n",
                q.map(
                                (rs, ctx) ->
                                        rs.getString("table")
                                                + " key="
                                                + rs.getString("key")
                                                + " type="
                                                + rs.getString("type")
                                                + " extra="
                                                + rs.getString("Extra"))
                        .list());
    }

    /**
     * Index entries the session examined since {@code FLUSH STATUS}: key lookups and steps, and
     * entries the engine skipped by index condition pushdown (which the read counters leave out: a
     * claim index without {@code dead_at} made every claim step over each dead row this way).
     */
    private static long entriesRead(Handle h) {
        Map<String, Long> status = new HashMap<>();
        h.createQuery(
                        "SHOW SESSION STATUS WHERE Variable_name LIKE 'Handler_read%'"
                                + " OR Variable_name = 'Handler_icp_attempts'")
                .map((rs, ctx) -> status.put(rs.getString(1), rs.getLong(2)))
                .list();
        return status.get("Handler_read_key")
                + status.get("Handler_read_next")
                + status.get("Handler_read_prev")
                + status.get("Handler_read_first")
                + status.get("Handler_read_last")
                + status.get("Handler_read_rnd_next")
                + status.get("Handler_icp_attempts");
    }

    @Test
    void claimRead_walksTheClaimIndexInOrder_readingAboutLimitEntries() {
        Instant now = Instant.now();
        java.util.function.UnaryOperator<Query> args =
                q -> q.bind("now", sql.time(now)).bind("limit", LIMIT);
        jdbi.useTransaction(
                h -> {
                    String plan = explain(h, sql.candidates, args);
                    assertThat(plan)
                            .as("plan:\n%s", plan)
                            .contains("key=outbox_plan_claim_idx")
                            .doesNotContain("filesort");
                    h.execute("FLUSH STATUS");
                    assertThat(args.apply(h.createQuery(sql.candidates)).mapToMap().list())
                            .hasSize(LIMIT);
                    // Each entry of the range may count twice (read, and checked by index
                    // condition pushdown); a walk over the 20 000 dead rows counts 20 000 more.
                    assertThat(entriesRead(h))
                            .as("index entries examined for a page of %d", LIMIT)
                            .isLessThanOrEqualTo(2 * LIMIT + 2);
                    h.rollback();
                });
    }

    @Test
    void nextIdPage_continuesTheClaimIndexInOrder_andRowsAreLockedByPrimaryKey() {
        Instant now = Instant.now();
        jdbi.useTransaction(
                h -> {
                    List<Map<String, Object>> first =
                            h.createQuery(sql.candidates)
                                    .bind("now", sql.time(now))
                                    .bind("limit", LIMIT)
                                    .mapToMap()
                                    .list();
                    Map<String, Object> last = first.get(first.size() - 1);
                    java.util.function.UnaryOperator<Query> after =
                            q ->
                                    q.bind("now", sql.time(now))
                                            .bind("limit", LIMIT)
                                            .bind("afterAt", last.get("available_at"))
                                            .bind("afterSeq", last.get("seq"));
                    String plan = explain(h, sql.candidatesAfter, after);
                    assertThat(plan)
                            .as("plan:\n%s", plan)
                            .contains("key=outbox_plan_claim_idx")
                            .doesNotContain("filesort");
                    h.execute("FLUSH STATUS");
                    List<String> next =
                            after.apply(h.createQuery(sql.candidatesAfter))
                                    .map((rs, ctx) -> rs.getString("id"))
                                    .list();
                    long read = entriesRead(h);
                    List<String> both =
                            h.createQuery(sql.candidates)
                                    .bind("now", sql.time(now))
                                    .bind("limit", 2 * LIMIT)
                                    .map((rs, ctx) -> rs.getString("id"))
                                    .list();
                    assertThat(next)
                            .as("the page after the first")
                            .containsExactlyElementsOf(both.subList(LIMIT, 2 * LIMIT));
                    assertThat(read)
                            .as("index entries examined for the next page of %d", LIMIT)
                            .isLessThanOrEqualTo(2 * LIMIT + 2);
                    String lock =
                            explain(
                                    h,
                                    sql.lockCandidateRows,
                                    q ->
                                            MariaDbDialect.bindKeys(q, next)
                                                    .bind("now", sql.time(now)));
                    assertThat(lock).as("plan:\n%s", lock).contains("c key=PRIMARY type=eq_ref");
                    h.rollback();
                });
    }

    @Test
    void predecessorProbes_takeOneIndexStepEach_whateverTheKeysBacklog() {
        jdbi.useTransaction(
                h -> {
                    List<Candidate> page =
                            sql.lockCandidates(h, Instant.now(), LIMIT, null, "plan");
                    // Heads of keys with 100 rows each: a probe walking the key would read them
                    // all.
                    List<StoredRow> heads = page.stream().map(Candidate::row).toList();
                    h.execute("FLUSH STATUS");
                    Map<String, Long> prev = sql.predecessors(h, heads);
                    assertThat(prev).as("none of the key heads has a predecessor").isEmpty();
                    assertThat(entriesRead(h))
                            .as("index entries read by %d probes", heads.size())
                            .isLessThanOrEqualTo(heads.size());
                    // Rows deep in their key: the probe finds the row just before, one step.
                    List<StoredRow> deep =
                            h.createQuery(
                                            "SELECT "
                                                    + SqlDialect.MESSAGE_COLUMNS
                                                    + " FROM "
                                                    + sql.table
                                                    + " WHERE id IN (<ids>)")
                                    .bindList(
                                            "ids",
                                            IntStream.rangeClosed(1, LIMIT)
                                                    .mapToObj(i -> "p" + (100_000 + i))
                                                    .toList())
                                    .map((rs, ctx) -> StoredRow.read(rs, sql))
                                    .list();
                    h.execute("FLUSH STATUS");
                    Map<String, Long> deepPrev = sql.predecessors(h, deep);
                    assertThat(deepPrev).hasSize(LIMIT);
                    assertThat(entriesRead(h))
                            .as("index entries read by %d probes", deep.size())
                            .isLessThanOrEqualTo(deep.size());
                    h.rollback();
                });
    }

    @Test
    void unparking_goesThroughTheParkedIndex() {
        String plan =
                jdbi.withHandle(
                        h ->
                                explain(
                                        h,
                                        sql.unparkOneKey,
                                        q -> q.bind("key", "blocked-7").bind("n", 2)));
        assertThat(plan)
                .as("plan:\n%s", plan)
                .contains("key=outbox_plan_parked_idx")
                .doesNotContain("filesort");
    }

    @Test
    void claim_handsOutTheOldestPendingRows_andNoRowOfABlockedKey() {
        List<Delivery> claimed =
                store.claim(new ClaimRequest("relay", Instant.now(), Duration.ofMinutes(5), LIMIT));
        assertThat(claimed.stream().map(d -> d.message().id()))
                .containsExactlyElementsOf(
                        IntStream.rangeClosed(1, LIMIT).mapToObj(i -> "p" + i).toList());
    }
}
