package io.outbox4j.benchmarks;

import io.outbox4j.api.Outbox;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The business transactions of the {@code write} scenario, one per {@link WriteScenario.Variant}:
 * insert one order and enqueue (or hand-insert) one event through each entry point an application
 * uses — a plain JDBC {@code Connection}, a Jdbi {@code Handle}, a Spring-managed transaction —
 * each compared with a hand-written INSERT through the same entry point.
 *
 * <p>The Spring side takes the path of the starter's {@code TransactionalOutbox}: the connection
 * the transaction holds ({@code DataSourceUtils.getConnection}), its checks (a transaction is
 * active, read-write, not in auto-commit), {@code store.jdbc().enqueue} and one after-commit
 * synchronization per transaction. It is rebuilt here because the starter (Spring Boot 4.1) cannot
 * share this module's class path with namastack-outbox (Spring Boot 4.0).
 */
final class Writers {
    private static final String INSERT_ORDER =
            "INSERT INTO " + WriteScenario.ORDERS + " (customer, amount) VALUES (?, ?)";

    /** One business transaction, committed. */
    interface Transaction {
        void run() throws Exception;
    }

    private final DataSource pool;
    private final Jdbi jdbi;
    private final JdbiOutboxStore store;
    private final Outbox<Connection> jdbc;
    private final Outbox<Connection> unsignalled;
    private final TransactionTemplate spring;
    private final JdbcTemplate template;

    Writers(Env env, JdbiOutboxStore store, JdbiOutboxStore unsignalled) {
        this.pool = env.pool();
        this.jdbi = env.jdbi();
        this.store = store;
        this.jdbc = store.jdbc();
        this.unsignalled = unsignalled.jdbc();
        this.spring = new TransactionTemplate(new DataSourceTransactionManager(pool));
        this.template = new JdbcTemplate(pool);
    }

    Transaction transaction(WriteScenario.Variant v, byte[] payload) {
        String hand =
                HandWritten.insertSql(
                                v == WriteScenario.Variant.HAND_ON_CONFLICT
                                        ? WriteScenario.HAND_CONFLICT
                                        : WriteScenario.HAND)
                        + (v == WriteScenario.Variant.HAND_ON_CONFLICT
                                ? " ON CONFLICT (id) DO NOTHING"
                                : "");
        return switch (v) {
            case NO_EVENT -> () -> jdbcTransaction(c -> {});
            case OUTBOX4J ->
                    () -> jdbcTransaction(c -> jdbc.enqueue(c.connection, message(c.key, payload)));
            case OUTBOX4J_UNSIGNALLED ->
                    () ->
                            jdbcTransaction(
                                    c ->
                                            unsignalled.enqueue(
                                                    c.connection, message(c.key, payload)));
            case HAND_WRITTEN, HAND_ON_CONFLICT ->
                    () ->
                            jdbcTransaction(
                                    c -> {
                                        try (PreparedStatement st =
                                                c.connection.prepareStatement(hand)) {
                                            HandWritten.bindInsert(st, newId(), c.key, payload);
                                            st.executeUpdate();
                                        }
                                    });
            case OUTBOX4J_JDBI ->
                    () ->
                            jdbi.useTransaction(
                                    h -> store.enqueue(h, message(insertOrder(h), payload)));
            case HAND_JDBI ->
                    () ->
                            jdbi.useTransaction(
                                    h -> {
                                        String key = insertOrder(h);
                                        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
                                        h.createUpdate(hand)
                                                .bind(0, newId())
                                                .bind(1, Env.TOPIC)
                                                .bind(2, key)
                                                .bind(3, Env.MODULE)
                                                .bind(4, "application/json")
                                                .bind(5, payload)
                                                .bind(6, "")
                                                .bind(7, now)
                                                .bindNull(8, java.sql.Types.TIMESTAMP_WITH_TIMEZONE)
                                                .bind(9, now)
                                                .bind(10, now)
                                                .execute();
                                    });
            case OUTBOX4J_SPRING ->
                    () ->
                            spring.executeWithoutResult(
                                    status -> starterEnqueue(message(insertOrder(), payload)));
            case HAND_SPRING ->
                    () ->
                            spring.executeWithoutResult(
                                    status -> {
                                        String key = insertOrder();
                                        OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
                                        template.update(
                                                hand,
                                                newId(),
                                                Env.TOPIC,
                                                key,
                                                Env.MODULE,
                                                "application/json",
                                                payload,
                                                "",
                                                now,
                                                null,
                                                now,
                                                now);
                                    });
        };
    }

    /** The connection of a JDBC business transaction and the key of its order. */
    private record Business(Connection connection, String key) {}

    private interface JdbcWork {
        void run(Business c) throws SQLException;
    }

    private void jdbcTransaction(JdbcWork work) throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            String key = WriteScenario.insertOrder(c);
            work.run(new Business(c, key));
            c.commit();
        }
    }

    private static String insertOrder(Handle h) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String customer = "customer-" + random.nextInt(10_000);
        h.createUpdate(INSERT_ORDER)
                .bind(0, customer)
                .bind(1, BigDecimal.valueOf(random.nextInt(1_000_000), 2))
                .execute();
        return customer;
    }

    private String insertOrder() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String customer = "customer-" + random.nextInt(10_000);
        template.update(INSERT_ORDER, customer, BigDecimal.valueOf(random.nextInt(1_000_000), 2));
        return customer;
    }

    /** What the starter's {@code TransactionalOutbox.enqueue} does, step for step. */
    private void starterEnqueue(io.outbox4j.api.Message message) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()
                || TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new IllegalStateException("no read-write Spring transaction");
        }
        Connection connection = DataSourceUtils.getConnection(pool);
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalStateException("an auto-commit connection");
            }
            jdbc.enqueue(connection, message);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        } finally {
            DataSourceUtils.releaseConnection(connection, pool);
        }
        for (TransactionSynchronization s :
                TransactionSynchronizationManager.getSynchronizations()) {
            if (s instanceof AfterCommit) {
                return;
            }
        }
        TransactionSynchronizationManager.registerSynchronization(new AfterCommit());
    }

    /** The starter's after-commit wake-up of its relay; no relay runs in this scenario. */
    private static final class AfterCommit implements TransactionSynchronization {
        @Override
        public void afterCommit() {}
    }

    private static String newId() {
        return UUID.randomUUID().toString();
    }

    private static io.outbox4j.api.Message message(String key, byte[] payload) {
        return WriteScenario.message(newId(), key, payload);
    }
}
