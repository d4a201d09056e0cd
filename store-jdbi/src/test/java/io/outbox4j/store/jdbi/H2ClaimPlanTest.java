package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * On H2 the claim read walks the claim index in claim order and stops at the limit ("index
 * sorted").
 */
class H2ClaimPlanTest {
    @Test
    void claimRead_walksTheClaimIndexInOrder() throws Exception {
        Jdbi jdbi = Databases.h2("plan");
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName("outbox_plan").build();
        store.createSchemaIfAbsent();
        StringBuilder plan = new StringBuilder();
        try (Handle h = jdbi.open();
                Statement st = h.getConnection().createStatement()) {
            st.execute(
                    "INSERT INTO \"outbox_plan\" (id, topic, module, content_type, payload, headers, occurred_at,"
                            + " available_at, dead_at)"
                            + " SELECT 'plan-' || x, 'orders', 'plan', 'application/json', X'7B7D', '', LOCALTIMESTAMP,"
                            + "   CASE WHEN MOD(x, 2) = 0 THEN LOCALTIMESTAMP END, CASE WHEN MOD(x, 2) = 1 THEN LOCALTIMESTAMP END"
                            + " FROM SYSTEM_RANGE(1, 2000)");
            st.execute("ANALYZE TABLE \"outbox_plan\"");
            try (PreparedStatement explain =
                    h.getConnection().prepareStatement("EXPLAIN " + store.sql().claim)) {
                explain.setObject(1, LocalDateTime.now(ZoneOffset.UTC));
                explain.setInt(2, 100);
                try (ResultSet rs = explain.executeQuery()) {
                    while (rs.next()) {
                        plan.append(rs.getString(1));
                    }
                }
            }
        }
        assertThat(plan.toString()).contains("outbox_plan_claim_idx").contains("index sorted");
    }
}
