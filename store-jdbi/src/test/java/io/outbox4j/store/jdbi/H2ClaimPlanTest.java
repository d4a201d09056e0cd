package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * On H2 the claim read walks the claim index in claim order and stops at the limit ("index
 * sorted"), past dead and parked rows (3 000 of each, due before the 3 000 pending ones), and each
 * predecessor probe reads one or two entries of the key index. Asserted on {@code EXPLAIN ANALYZE}
 * scan counts.
 */
class H2ClaimPlanTest {
    private static final int LIMIT = 100;

    @Test
    void claimRead_walksTheClaimIndexInOrder_pastDeadAndParkedRows_andProbesTheKeyIndex()
            throws Exception {
        Jdbi jdbi = Databases.h2("plan");
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName("outbox_plan").build();
        store.createSchemaIfAbsent();
        H2Dialect sql = (H2Dialect) store.sql();
        String plan;
        try (Handle h = jdbi.open();
                Statement st = h.getConnection().createStatement()) {
            st.execute("DELETE FROM " + sql.table);
            // x mod 3 = 0: dead (no available_at); 1: parked, due early; 2: pending, 100 keys.
            st.execute(
                    "INSERT INTO "
                            + sql.table
                            + " (id, topic, msg_key, module, content_type, payload, headers,"
                            + " occurred_at, enqueued_at, available_at, dead_at, parked)"
                            + " SELECT 'plan-' || x, 'orders', 'k' || MOD(x, 300), 'plan',"
                            + " 'application/json', X'7B7D', '', LOCALTIMESTAMP, LOCALTIMESTAMP,"
                            + " CASE MOD(x, 3) WHEN 0 THEN NULL"
                            + "   WHEN 1 THEN TIMESTAMP '2000-01-01 00:00:00'"
                            + "   ELSE DATEADD(MICROSECOND, x, TIMESTAMP '2000-01-01 01:00:00') END,"
                            + " CASE WHEN MOD(x, 3) = 0 THEN LOCALTIMESTAMP END, MOD(x, 3) = 1"
                            + " FROM SYSTEM_RANGE(1, 9000)");
            st.execute("ANALYZE TABLE " + sql.table);
            plan =
                    String.join(
                            "\n",
                            h.createQuery("EXPLAIN ANALYZE " + sql.candidates)
                                    .bind("now", sql.time(Instant.now()))
                                    .bind("limit", LIMIT)
                                    .mapTo(String.class)
                                    .list());
        }
        assertThat(plan)
                .as("plan:\n%s", plan)
                .contains("outbox_plan_claim_idx")
                .contains("index sorted")
                .contains("outbox_plan_key_idx");
        List<Long> scans = scanCounts(plan);
        // The probe's scan count comes first (its subquery is printed first), then the claim's.
        assertThat(scans).as("scan counts, plan:\n%s", plan).hasSize(2);
        assertThat(scans.get(1)).as("claim index rows read, plan:\n%s", plan).isEqualTo(LIMIT);
        assertThat(scans.get(0))
                .as("key index entries read by %d probes, plan:\n%s", LIMIT, plan)
                .isLessThanOrEqualTo(2 * LIMIT);
    }

    private static List<Long> scanCounts(String plan) {
        List<Long> counts = new ArrayList<>();
        Matcher m = Pattern.compile("scanCount: (\\d+)").matcher(plan);
        while (m.find()) {
            counts.add(Long.parseLong(m.group(1)));
        }
        return counts;
    }
}
