package io.outbox4j.spring.boot;

import io.outbox4j.api.Message;
import io.outbox4j.api.Outbox;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Enqueues through the connection the current Spring transaction holds for the outbox's {@link
 * DataSource} ({@link DataSourceUtils#getConnection}), so JDBC, JPA and jOOQ transactions alike
 * carry the message; refuses to run outside a transaction; wakes the relay after the commit.
 */
final class JdbcTransactionalOutbox implements TransactionalOutbox {
    static final String NO_TRANSACTION =
            "outbox4j: enqueue needs an active Spring-managed transaction, so that the message commits"
                    + " or rolls back with the business change; call it from a @Transactional method"
                    + " (or inside TransactionTemplate.execute)";
    static final String READ_ONLY =
            "outbox4j: enqueue needs a read-write transaction, but the current one is read-only"
                    + " (@Transactional(readOnly = true))";
    static final String FOREIGN_TRANSACTION =
            "outbox4j: the active transaction holds no connection of the outbox's DataSource (an"
                    + " auto-commit connection was handed out), so the message would commit on its own;"
                    + " the transaction manager must manage that DataSource (DataSourceTransactionManager,"
                    + " JdbcTransactionManager or JpaTransactionManager over it)";

    private final Outbox<Connection> jdbc;
    private final DataSource dataSource;
    private final Runnable afterCommit;

    /**
     * @param jdbc the store's JDBC write side
     * @param dataSource the DataSource the store and the application's transactions share
     * @param afterCommit run once after each transaction that enqueued commits (wakes the relay)
     */
    JdbcTransactionalOutbox(Outbox<Connection> jdbc, DataSource dataSource, Runnable afterCommit) {
        this.jdbc = jdbc;
        this.dataSource = dataSource;
        this.afterCommit = afterCommit;
    }

    @Override
    public void enqueue(Message message) {
        insert(connection -> jdbc.enqueue(connection, message));
    }

    @Override
    public void enqueueAll(List<Message> messages) {
        insert(connection -> jdbc.enqueueAll(connection, messages));
    }

    private void insert(Consumer<Connection> write) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalTransactionStateException(NO_TRANSACTION);
        }
        if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new IllegalTransactionStateException(READ_ONLY);
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalTransactionStateException(FOREIGN_TRANSACTION);
            }
            write.accept(connection);
        } catch (SQLException e) {
            throw new CannotGetJdbcConnectionException(
                    "outbox4j: cannot read the transaction's connection state", e);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
        wakeUpAfterCommit();
    }

    /** Registers one wake-up per transaction (a suspended outer transaction keeps its own). */
    private void wakeUpAfterCommit() {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            return;
        }
        for (TransactionSynchronization s :
                TransactionSynchronizationManager.getSynchronizations()) {
            if (s instanceof WakeUp w && w.owner == this) {
                return;
            }
        }
        TransactionSynchronizationManager.registerSynchronization(new WakeUp(this));
    }

    @Override
    public String toString() {
        return "TransactionalOutbox[" + jdbc + "]";
    }

    /** Wakes the relay once the transaction committed. */
    private static final class WakeUp implements TransactionSynchronization {
        private final JdbcTransactionalOutbox owner;

        WakeUp(JdbcTransactionalOutbox owner) {
            this.owner = owner;
        }

        @Override
        public void afterCommit() {
            owner.afterCommit.run();
        }
    }
}
