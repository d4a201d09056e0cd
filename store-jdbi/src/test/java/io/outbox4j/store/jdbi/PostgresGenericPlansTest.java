package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.testservices.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL runs the relay's claims (as a member and not) and keyed completions on their prepared
 * statements' generic plans: each call costs an execution, not a planning too. With the default
 * {@code plan_cache_mode} the server judged the generic plan of a statement over a few ids dearer
 * than a custom one and planned the statements anew on almost every call (the latency benchmark:
 * 778 plans in 990 completions), which cost it more than running them.
 *
 * <p>The relay's calls run one after another on one connection (nothing else runs beside them: the
 * store sends no wake-up signals), whose prepared statements ({@code pg_prepared_statements}) count
 * how each execution was planned.
 */
class PostgresGenericPlansTest {
    private static final String TABLE = "outbox_generic_plans";
    private static final int ROUNDS = 40;

    @Test
    void claimsAndKeyedCompletionsRunOnGenericPlans() throws SQLException {
        PostgresServer server = PostgresServer.shared();
        try (Connection one =
                DriverManager.getConnection(
                        Databases.postgresUrl(), server.user(), server.password())) {
            runRelayCallsAndCheckPlans(Jdbi.create(new OneConnection(one)));
        }
    }

    private static void runRelayCallsAndCheckPlans(Jdbi jdbi) {
        // no wake-up signals: their thread would use the one connection beside the relay calls
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(jdbi).tableName(TABLE).signalCommits(false).build();
        store.createSchemaIfAbsent();
        jdbi.useHandle(h -> h.execute(store.sql().deleteAll));
        for (int round = 0; round < ROUNDS; round++) {
            int r = round;
            jdbi.useTransaction(
                    h ->
                            store.enqueueAll(
                                    h,
                                    List.of(
                                            keyed("a" + r, "key-a" + r),
                                            keyed("b" + r, "key-b" + r))));
            // every other claim as a member of the outbox (its own statement)
            boolean member = round % 2 == 0;
            if (member) {
                store.renew("relay", Duration.ofMinutes(1));
            }
            List<Delivery> claimed =
                    store.claim(
                            new ClaimRequest(
                                    "relay", Instant.now(), Duration.ofMinutes(1), 10, member));
            assertThat(claimed).hasSize(2);
            assertThat(
                            store.complete(
                                    new Completion(
                                            "relay",
                                            claimed.stream().map(Delivery::receipt).toList())))
                    .as("stale receipts")
                    .isEmpty();
        }

        List<Map<String, Object>> statements =
                jdbi.withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT statement, generic_plans, custom_plans"
                                                        + " FROM pg_prepared_statements"
                                                        + " WHERE statement LIKE :table"
                                                        + " AND (ltrim(statement) LIKE 'WITH page%'"
                                                        + " OR ltrim(statement) LIKE 'WITH d AS%'"
                                                        + " OR ltrim(statement) LIKE"
                                                        + " 'SELECT count(pg_advisory_xact_lock%')")
                                        .bind("table", "%" + TABLE + "%")
                                        .mapToMap()
                                        .list());
        // the claim (of a member and not), the completion's bucket locks and the completion itself
        assertThat(statements).as("the relay's prepared statements").hasSize(4);
        for (Map<String, Object> s : statements) {
            long generic = ((Number) s.get("generic_plans")).longValue();
            long custom = ((Number) s.get("custom_plans")).longValue();
            assertThat(custom)
                    .as(
                            "custom plans (a planning per call) of %s, beside %d generic",
                            s.get("statement"), generic)
                    .isZero();
            // PgJDBC prepares a statement on the server from its fifth use on
            assertThat(generic).as("generic plans of %s", s.get("statement")).isPositive();
        }
    }

    /** Every handle on the one connection (whose prepared statements the test reads). */
    private record OneConnection(Connection connection) implements ConnectionFactory {
        @Override
        public Connection openConnection() {
            return connection;
        }

        @Override
        public void closeConnection(Connection c) {}
    }

    private static Message keyed(String id, String key) {
        return Message.builder().id(id).topic("t").module("m").key(key).payload("p").build();
    }
}
