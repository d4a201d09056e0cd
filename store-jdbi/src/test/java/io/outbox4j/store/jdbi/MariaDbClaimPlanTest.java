package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Statement;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * On MariaDB the claim's locking read must walk the claim index in claim order: a filesort would
 * make InnoDB read and lock every claimable row before the LIMIT. Asserted on EXPLAIN with a
 * backlog and history.
 */
class MariaDbClaimPlanTest {
    @Test
    void claimRead_walksTheClaimIndexInOrder_withoutFilesort() throws Exception {
        Jdbi jdbi = Databases.mariaDb();
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName("outbox_plan").build();
        store.createSchemaIfAbsent();
        StringBuilder plan = new StringBuilder();
        try (Handle h = jdbi.open();
                Statement st = h.getConnection().createStatement()) {
            st.execute("TRUNCATE TABLE outbox_plan");
            st.execute(
                    "INSERT INTO outbox_plan (id, topic, module, content_type, payload, headers, occurred_at, enqueued_at,"
                            + " available_at, attempts, lease_owner, receipt, dead_at, dead_reason)"
                            + " SELECT CONCAT('plan-', seq), 'orders', 'plan', 'application/json', '{}', '',"
                            + "   UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR,"
                            + "   CASE WHEN seq <= 20000 THEN UTC_TIMESTAMP(6) - INTERVAL 1 HOUR + INTERVAL seq MICROSECOND"
                            + "        WHEN seq <= 30000 THEN NULL"
                            + "        ELSE UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE END,"
                            + "   IF(seq <= 20000, 0, 1),"
                            + "   IF(seq > 30000, 'other-relay', NULL),"
                            + "   IF(seq > 30000, LEFT(MD5(seq), 36), NULL),"
                            + "   IF(seq > 20000 AND seq <= 30000, UTC_TIMESTAMP(6), NULL),"
                            + "   IF(seq > 20000 AND seq <= 30000, 'poison', NULL)"
                            + " FROM seq_1_to_40000");
            st.execute("ANALYZE TABLE outbox_plan");
            MariaDbDialect sql = (MariaDbDialect) store.sql();
            h.createQuery("EXPLAIN " + sql.candidates)
                    .bind("now", sql.time(java.time.Instant.now()))
                    .bind("limit", 100)
                    .map(
                            (rs, ctx) ->
                                    plan.append("type=")
                                            .append(rs.getString("type"))
                                            .append(" key=")
                                            .append(rs.getString("key"))
                                            .append(" rows=")
                                            .append(rs.getString("rows"))
                                            .append(" extra=")
                                            .append(rs.getString("Extra"))
                                            .append('\n'))
                    .list();
        }
        System.out.println("MariaDB claim plan (20k pending, 10k dead, 10k leased):\n" + plan);
        assertThat(plan.toString())
                .contains("key=outbox_plan_claim_idx")
                .doesNotContain("filesort");
    }
}
