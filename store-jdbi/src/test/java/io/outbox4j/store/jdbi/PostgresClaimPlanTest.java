package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.Query;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The claim stays flat on PostgreSQL: with 1 000 000 pending rows over 10 000 keys and 100 000
 * blocked keys (a dead head and two parked followers each, all due before every pending row), the
 * statements the store runs walk indexes only and read about {@code limit} rows. Asserted on {@code
 * EXPLAIN (ANALYZE, BUFFERS)} of the real statements (each run in a transaction that is rolled
 * back), then on a real claim and completion.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresClaimPlanTest {
    private static final String TABLE = "outbox_plan";
    private static final int PENDING = 1_000_000;
    private static final int KEYS = 10_000;
    private static final int BLOCKED_KEYS = 100_000;
    private static final int LIMIT = 100;
    private static final String TOKEN = "00000000-0000-0000-0000-000000000000";

    /** A scan node of the plan: {@code … on outbox_plan … (actual time=… rows=N loops=L)}. */
    private static final Pattern ACTUAL_ROWS = Pattern.compile("rows=(\\d+) loops=(\\d+)");

    private static Jdbi jdbi;
    private static JdbiOutboxStore store;
    private static PostgresDialect sql;

    @BeforeAll
    static void loadTheBacklog() throws Exception {
        jdbi = Databases.postgres();
        store = Databases.createdStore(jdbi, TABLE);
        sql = (PostgresDialect) store.sql();
        Databases.onStatement(jdbi, PostgresClaimPlanTest::load);
        store.createSchemaIfAbsent(); // the indexes, built over the loaded rows
        jdbi.useHandle(h -> h.execute("ANALYZE " + sql.table));
    }

    /**
     * Loads the backlog into the emptied table without its indexes and primary key, then adds the
     * primary key back.
     */
    private static void load(Statement st) throws SQLException {
        st.execute("TRUNCATE " + sql.table);
        // Loading into an unlogged table without its indexes and building them afterwards
        // takes seconds; the plans are the same.
        st.execute("ALTER TABLE " + sql.table + " SET UNLOGGED");
        st.execute("SET maintenance_work_mem = '256MB'");
        for (String index : List.of("_claim_idx", "_key_idx", "_parked_idx", "_dead_idx")) {
            st.execute("DROP INDEX IF EXISTS \"" + Schema.objectName(TABLE, index) + "\"");
        }
        String pkey = "\"" + Schema.objectName(TABLE, "_pkey") + "\"";
        st.execute("ALTER TABLE " + sql.table + " DROP CONSTRAINT IF EXISTS " + pkey);
        // 100 000 blocked keys: a dead head and two parked followers, due two hours ago.
        st.execute(
                "INSERT INTO "
                        + sql.table
                        + Databases.LOADED_COLUMNS
                        + " SELECT 'b' || (g / 3) || '-' || (g % 3), 'orders', 'blocked-' || (g / 3),"
                        + " 'plan', 'application/json', '\\x7b7d'::bytea, '',"
                        + " now() - interval '2 hours', now() - interval '2 hours',"
                        + " CASE WHEN g % 3 = 0 THEN NULL ELSE now() - interval '2 hours' END,"
                        + " g % 3 > 0, CASE WHEN g % 3 = 0 THEN 5 ELSE 0 END,"
                        + " CASE WHEN g % 3 = 0 THEN now() - interval '1 hour' END,"
                        + " CASE WHEN g % 3 = 0 THEN 'poison' END"
                        + " FROM generate_series(3, "
                        + (3 * BLOCKED_KEYS + 2)
                        + ") AS g");
        // 1 000 000 pending rows over 10 000 keys, one microsecond apart, due an hour ago.
        st.execute(
                "INSERT INTO "
                        + sql.table
                        + Databases.LOADED_COLUMNS
                        + " SELECT 'p' || g, 'orders', 'k' || (g % "
                        + KEYS
                        + "), 'plan', 'application/json', '\\x7b7d'::bytea, '',"
                        + " now() - interval '1 hour', now() - interval '1 hour',"
                        + " now() - interval '1 hour' + g * interval '1 microsecond', FALSE, 0,"
                        + " NULL, NULL FROM generate_series(1, "
                        + PENDING
                        + ") AS g");
        st.execute("ALTER TABLE " + sql.table + " ADD CONSTRAINT " + pkey + " PRIMARY KEY (id)");
    }

    private static String explain(String statement, UnaryOperator<Query> bind) {
        return Databases.explainPostgres(jdbi, "ANALYZE, BUFFERS, COSTS OFF", statement, bind);
    }

    private static Query claimArguments(Query q) {
        Instant now = Instant.now();
        return q.bind("now", sql.time(now))
                .bind("limit", LIMIT)
                .bind("until", sql.time(now.plusSeconds(60)))
                .bind("owner", "relay")
                .bind("token", TOKEN);
    }

    /** The actual rows a plan node named by {@code what} returned per loop, times its loops. */
    private static long rowsRead(String plan, String what) {
        for (String line : plan.split("\n", -1)) {
            if (line.contains(what)) {
                Matcher m = ACTUAL_ROWS.matcher(line);
                if (m.find()) {
                    return Long.parseLong(m.group(1)) * Long.parseLong(m.group(2));
                }
            }
        }
        throw new AssertionError("no plan node with '" + what + "' in:\n" + plan);
    }

    /** The shared buffers (hit + read) the whole statement touched: the first Buffers line. */
    private static long buffers(String plan) {
        Matcher m = Pattern.compile("Buffers: shared hit=(\\d+)(?: read=(\\d+))?").matcher(plan);
        assertThat(m.find()).as("buffers in:\n%s", plan).isTrue();
        return Long.parseLong(m.group(1)) + (m.group(2) == null ? 0 : Long.parseLong(m.group(2)));
    }

    /**
     * Explains {@code statement} with the claim's arguments and asserts that its plan contains
     * {@code node}, scans no table sequentially, reads at most {@code LIMIT} rows of the claim
     * index and touches few buffers; returns the plan.
     */
    private static String explainWalkingTheClaimIndex(String statement, String node) {
        String plan = explain(statement, PostgresClaimPlanTest::claimArguments);
        assertThat(plan)
                .as("plan:\n%s", plan)
                .contains("Index Scan using outbox_plan_claim_idx on outbox_plan c")
                .contains(node)
                .doesNotContain("Seq Scan");
        assertThat(rowsRead(plan, "outbox_plan_claim_idx"))
                .as("claim index rows read, plan:\n%s", plan)
                .isLessThanOrEqualTo(LIMIT);
        // 1.3 M rows fill tens of thousands of pages; a claim of 100 touches a few per row.
        assertThat(buffers(plan)).as("buffers, plan:\n%s", plan).isLessThan(3_000);
        return plan;
    }

    @Test
    @Order(1)
    void claimStatement_readsAboutLimitRowsOfTheClaimIndex_andProbesTheKeyIndex() {
        String plan = explainWalkingTheClaimIndex(sql.claimFree, "outbox_plan_key_idx");
        assertThat(rowsRead(plan, "Update on outbox_plan"))
                .as("rows leased, plan:\n%s", plan)
                .isEqualTo(LIMIT);
    }

    @Test
    @Order(2)
    void walkPage_readsAboutLimitRowsOfTheClaimIndex() {
        explainWalkingTheClaimIndex(sql.candidates, "LockRows");
    }

    @Test
    @Order(3)
    void leaseParkAndUnpark_goThroughThePrimaryKeyAndTheParkedIndex() {
        List<String> ids = IntStream.rangeClosed(1, LIMIT).mapToObj(i -> "p" + i).toList();
        String lease =
                explain(sql.lease, q -> claimArguments(q).bindArray("ids", String.class, ids));
        String park = explain(sql.park, q -> q.bindArray("ids", String.class, ids));
        List<String> keys = IntStream.rangeClosed(1, LIMIT).mapToObj(i -> "blocked-" + i).toList();
        String unpark =
                explain(
                        sql.unpark,
                        q ->
                                q.bindArray("keys", String.class, keys)
                                        .bindArray(
                                                "counts",
                                                Integer.class,
                                                new ArrayList<>(
                                                        java.util.Collections.nCopies(LIMIT, 2))));
        for (String plan : List.of(lease, park, unpark)) {
            assertThat(plan)
                    .as("plan:\n%s", plan)
                    .contains("outbox_plan_pkey")
                    .doesNotContain("Seq Scan");
        }
        assertThat(unpark).as("plan:\n%s", unpark).contains("outbox_plan_parked_idx");
        assertThat(rowsRead(unpark, "outbox_plan_parked_idx"))
                .as("parked rows read, plan:\n%s", unpark)
                .isEqualTo(2L * LIMIT);
    }

    @Test
    @Order(4)
    void keyedCompletion_deletesThroughThePrimaryKey_andUnparksThroughTheParkedIndex() {
        List<Delivery> claimed =
                store.claim(new ClaimRequest("relay", Instant.now(), Duration.ofMinutes(5), LIMIT));
        String token = claimed.get(0).receipt().substring(0, Receipt.TOKEN_LENGTH);
        List<String> ids = claimed.stream().map(d -> d.message().id()).toList();
        String plan =
                explain(
                        sql.completeKeyed,
                        q ->
                                q.bind("owner", "relay")
                                        .bind("token", token)
                                        .bindArray("ids", String.class, ids));
        assertThat(plan)
                .as("plan:\n%s", plan)
                .contains("outbox_plan_pkey")
                .contains("outbox_plan_parked_idx")
                .doesNotContain("Seq Scan");
        assertThat(rowsRead(plan, "Delete on outbox_plan"))
                .as("rows deleted, plan:\n%s", plan)
                .isEqualTo(LIMIT);
        assertThat(
                        store.complete(
                                new Completion(
                                        "relay", claimed.stream().map(Delivery::receipt).toList())))
                .isEmpty();
    }

    @Test
    @Order(5)
    void claim_handsOutTheOldestPendingRows_andNoRowOfABlockedKey() {
        List<Delivery> claimed =
                store.claim(new ClaimRequest("relay", Instant.now(), Duration.ofMinutes(5), LIMIT));
        assertThat(claimed.stream().map(d -> d.message().id()))
                .as("the oldest pending rows after the hundred completed")
                .containsExactlyElementsOf(
                        IntStream.rangeClosed(LIMIT + 1, 2 * LIMIT)
                                .mapToObj(i -> "p" + i)
                                .toList());
    }
}
