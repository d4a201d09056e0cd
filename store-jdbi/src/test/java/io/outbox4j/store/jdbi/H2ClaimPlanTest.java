package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Statement;
import java.time.Instant;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * On H2 the claim read walks the claim index in claim order and stops at the limit ("index
 * sorted"), and the predecessor probe goes through the key index.
 */
class H2ClaimPlanTest {
    @Test
    void claimRead_walksTheClaimIndexInOrder_andProbesTheKeyIndex() throws Exception {
        Jdbi jdbi = Databases.h2("plan");
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName("outbox_plan").build();
        store.createSchemaIfAbsent();
        H2Dialect sql = (H2Dialect) store.sql();
        String plan;
        try (Handle h = jdbi.open();
                Statement st = h.getConnection().createStatement()) {
            st.execute(
                    "INSERT INTO \"outbox_plan\" (id, topic, msg_key, module, content_type, payload,"
                            + " headers, occurred_at, enqueued_at, available_at, dead_at, parked)"
                            + " SELECT 'plan-' || x, 'orders', 'k' || MOD(x, 100), 'plan',"
                            + " 'application/json', X'7B7D', '', LOCALTIMESTAMP, LOCALTIMESTAMP,"
                            + "   CASE WHEN MOD(x, 2) = 0 THEN LOCALTIMESTAMP END,"
                            + "   CASE WHEN MOD(x, 4) = 1 THEN LOCALTIMESTAMP END, MOD(x, 4) = 3"
                            + " FROM SYSTEM_RANGE(1, 4000)");
            st.execute("ANALYZE TABLE \"outbox_plan\"");
            plan =
                    String.join(
                            "\n",
                            h.createQuery("EXPLAIN " + sql.candidates)
                                    .bind("now", sql.time(Instant.now()))
                                    .bind("limit", 100)
                                    .mapTo(String.class)
                                    .list());
        }
        assertThat(plan)
                .contains("outbox_plan_claim_idx")
                .contains("index sorted")
                .contains("outbox_plan_key_idx");
    }
}
