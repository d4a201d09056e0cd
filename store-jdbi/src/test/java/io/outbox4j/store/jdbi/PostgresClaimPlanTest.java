package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Claim cost stays flat as history grows: with 200 000 pending rows plus 100 000 dead and 100 000
 * leased ones, the claim statement walks the partial claim index and never scans the table.
 * Asserted on the plan.
 */
class PostgresClaimPlanTest {
    private static final String TABLE = "outbox_plan";
    private static Jdbi jdbi;
    private static JdbiOutboxStore store;

    @BeforeAll
    static void load400kRows() throws Exception {
        jdbi = Databases.postgres();
        store = JdbiOutboxStore.builder(jdbi).tableName(TABLE).build();
        store.createSchemaIfAbsent();
        try (Handle h = jdbi.open();
                Statement st = h.getConnection().createStatement()) {
            st.execute("TRUNCATE " + TABLE);
            st.execute(
                    "INSERT INTO "
                            + TABLE
                            + " (id, topic, module, content_type, payload, headers, occurred_at,"
                            + " available_at, attempts, lease_owner, receipt, dead_at, dead_reason)"
                            + " SELECT 'plan-' || g, 'orders', 'plan', 'application/json', convert_to('{}', 'UTF8'), '',"
                            + "   now() - interval '1 hour',"
                            + "   CASE WHEN g <= 200000 THEN now() - interval '1 hour' + g * interval '1 millisecond'"
                            + "        WHEN g <= 300000 THEN NULL"
                            + "        ELSE now() + interval '10 minutes' END,"
                            + "   CASE WHEN g <= 200000 THEN 0 WHEN g <= 300000 THEN 8 ELSE 1 END,"
                            + "   CASE WHEN g > 300000 THEN 'other-relay' END,"
                            + "   CASE WHEN g > 300000 THEN left(md5(g::text), 36) END,"
                            + "   CASE WHEN g > 200000 AND g <= 300000 THEN now() END,"
                            + "   CASE WHEN g > 200000 AND g <= 300000 THEN 'poison' END"
                            + " FROM generate_series(1, 400000) AS g");
            st.execute("ANALYZE " + TABLE);
        }
    }

    private static String plan(String sql, Object... params) throws Exception {
        try (Handle h = jdbi.open();
                PreparedStatement st = h.getConnection().prepareStatement("EXPLAIN " + sql)) {
            for (int i = 0; i < params.length; i++) {
                st.setObject(i + 1, params[i]);
            }
            StringBuilder plan = new StringBuilder();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    plan.append(rs.getString(1)).append('\n');
                }
            }
            return plan.toString();
        }
    }

    @Test
    void claimStatement_walksThePartialIndex_andNeverScansTheTable() throws Exception {
        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
        String plan =
                plan(
                        store.sql().claim,
                        now.plusMinutes(5),
                        "relay",
                        "00000000-0000-0000-0000-000000000000",
                        now,
                        100);
        System.out.println(
                "PostgreSQL claim plan (200k pending, 100k dead, 100k leased):\n" + plan);
        assertThat(plan)
                .contains("Index Scan using outbox_plan_claim_idx on outbox_plan")
                .contains("LockRows")
                .doesNotContain("Seq Scan");
    }

    @Test
    void completeStatement_goesThroughThePrimaryKey() throws Exception {
        List<Object> params = new ArrayList<>();
        params.add("relay");
        for (int i = 0; i < 100; i++) {
            params.add("plan-" + (i * 1000 + 1));
        }
        for (int i = 0; i < 100; i++) {
            params.add("plan-" + (i * 1000 + 1));
            params.add("00000000-0000-0000-0000-000000000000");
        }
        String plan = plan(store.sql().complete(100), params.toArray());
        assertThat(plan).contains("outbox_plan_pkey").doesNotContain("Seq Scan");
    }

    @Test
    void claimAndCompleteOf100_stayFast_withTheBacklogAndHistory() {
        Instant now = Instant.now().plusSeconds(1);
        long start = System.nanoTime();
        List<Delivery> got =
                store.claim(new ClaimRequest("relay", now, Duration.ofMinutes(5), 100));
        long claimed = System.nanoTime();
        assertThat(got).hasSize(100);
        assertThat(got.get(0).message().id()).isEqualTo("plan-1");
        assertThat(
                        store.complete(
                                new Completion(
                                        "relay", got.stream().map(Delivery::receipt).toList())))
                .isEmpty();
        long completed = System.nanoTime();
        System.out.printf(
                "PostgreSQL with 400k rows: claim of 100 in %.1f ms, complete of 100 in %.1f ms%n",
                (claimed - start) / 1e6, (completed - claimed) / 1e6);
    }
}
