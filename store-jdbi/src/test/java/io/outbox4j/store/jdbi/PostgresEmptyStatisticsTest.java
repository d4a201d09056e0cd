package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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
        store = JdbiOutboxStore.builder(jdbi).tableName(TABLE).build();
        store.createSchemaIfAbsent();
        sql = (PostgresDialect) store.sql();
        try (Handle h = jdbi.open();
                Statement st = h.getConnection().createStatement()) {
            st.execute("TRUNCATE " + sql.table);
            st.execute(insert("drained-", 2_000));
            st.execute("DELETE FROM " + sql.table);
            // what autovacuum leaves when it cannot take the lock to truncate: pages, no rows
            st.execute("VACUUM (TRUNCATE false, ANALYZE) " + sql.table);
            st.execute(insert("burst-", ROWS));
        }
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
