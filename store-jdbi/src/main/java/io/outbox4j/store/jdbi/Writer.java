package io.outbox4j.store.jdbi;

import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxException;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The write side: checks messages against the store's limits, then inserts them through the
 * caller's connection, in the caller's transaction. It never commits, rolls back or closes that
 * connection; a connection in auto-commit mode is refused (the message would commit on its own,
 * apart from the business change) unless the store is built to allow it.
 */
final class Writer {
    private final SqlDialect dialect;
    private final Db db;
    private final MessageLimits limits;
    private final Clock clock;
    private final boolean autoCommitAllowed;
    private final String insertOne;

    Writer(
            SqlDialect dialect,
            Db db,
            MessageLimits limits,
            Clock clock,
            boolean autoCommitAllowed) {
        this.dialect = dialect;
        this.db = db;
        this.limits = limits;
        this.clock = clock;
        this.autoCommitAllowed = autoCommitAllowed;
        this.insertOne = dialect.insertOne();
    }

    /**
     * Inserts messages through the caller's connection.
     *
     * @param c the caller's connection
     * @param messages the messages, in order
     * @param how how the caller should open a transaction, for the auto-commit refusal
     */
    void insert(Connection c, List<Message> messages, String how) {
        if (messages == null) {
            throw new IllegalArgumentException("messages must not be null");
        }
        Set<String> ids = new HashSet<>();
        for (Message m : messages) {
            if (m == null) {
                throw new IllegalArgumentException("messages must not contain null");
            }
            check(m);
            if (!ids.add(m.id())) {
                throw DuplicateMessageException.twiceInOneBatch(m.id());
            }
        }
        boolean autoCommit;
        try {
            autoCommit = c.getAutoCommit();
        } catch (SQLException e) {
            throw new OutboxException(
                    "enqueue cannot read the connection's state: " + e.getMessage(), e);
        }
        if (autoCommit && !autoCommitAllowed) {
            throw new IllegalArgumentException(
                    "transaction must not be in auto-commit mode: the message would commit on its"
                            + " own, apart from the business change; "
                            + how
                            + " (or build the store with allowEnqueueOutsideTransaction(true))");
        }
        if (messages.isEmpty()) {
            return;
        }
        Instant now = Times.record(clock.instant());
        try {
            if (messages.size() == 1) {
                insertOne(c, messages.get(0), now);
            } else if (autoCommit) {
                c.setAutoCommit(false);
                try {
                    insertBatch(c, messages, now);
                    c.commit();
                } catch (SQLException | RuntimeException e) {
                    rollback(c, null, e);
                    throw e;
                } finally {
                    c.setAutoCommit(true);
                }
            } else {
                // The caller's transaction must stay usable after a failed batch (PostgreSQL
                // would abort it), and nothing of the batch may stay inserted: a savepoint gives
                // both.
                Savepoint savepoint = c.setSavepoint();
                try {
                    insertBatch(c, messages, now);
                } catch (SQLException | RuntimeException e) {
                    rollback(c, savepoint, e);
                    throw e;
                }
                c.releaseSavepoint(savepoint);
            }
        } catch (SQLException e) {
            throw enqueueFailure(e, messages);
        }
    }

    private void insertOne(Connection c, Message m, Instant now) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(insertOne)) {
            bind(st, m, now);
            if (st.executeUpdate() == 0) {
                // PostgreSQL: ON CONFLICT DO NOTHING kept the caller's transaction usable.
                throw new DuplicateMessageException(m.id(), null);
            }
        }
    }

    private void insertBatch(Connection c, List<Message> messages, Instant now)
            throws SQLException {
        try (PreparedStatement st = c.prepareStatement(dialect.insert)) {
            for (Message m : messages) {
                bind(st, m, now);
                st.addBatch();
            }
            st.executeBatch();
        }
    }

    /** Binds the columns of {@link SqlDialect#insert}, in its order. */
    private void bind(PreparedStatement st, Message m, Instant now) throws SQLException {
        int i = 0;
        st.setString(++i, m.id());
        st.setString(++i, m.topic());
        st.setString(++i, m.key().orElse(null));
        st.setString(++i, m.module());
        st.setString(++i, m.contentType());
        st.setBytes(++i, m.payload());
        st.setString(++i, HeaderCodec.encode(m.headers()));
        dialect.setTime(st, ++i, m.occurredAt());
        dialect.setTime(st, ++i, m.notBefore().orElse(null));
        dialect.setTime(st, ++i, now); // enqueued_at
        dialect.setTime(st, ++i, m.notBefore().orElse(now)); // available_at
    }

    private static void rollback(Connection c, @Nullable Savepoint savepoint, Exception failure) {
        try {
            if (savepoint == null) {
                c.rollback();
            } else {
                c.rollback(savepoint);
            }
        } catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    private RuntimeException enqueueFailure(SQLException e, List<Message> messages) {
        if (SqlErrors.duplicateKey(e)) {
            return new DuplicateMessageException(duplicateId(e, messages), e);
        }
        if (SqlErrors.missingTable(e)) {
            return new OutboxException(db.missingTable(), e);
        }
        return new OutboxException(
                "enqueue into table " + db.quotedName() + " failed: " + e.getMessage(), e);
    }

    /**
     * Finds the id a duplicate-key error is about: the longest id of the batch its text names, else
     * by position.
     */
    private static String duplicateId(SQLException e, List<Message> messages) {
        String text = SqlErrors.text(e);
        String best = null;
        for (Message m : messages) {
            if (text.contains(m.id()) && (best == null || m.id().length() > best.length())) {
                best = m.id();
            }
        }
        if (best != null) {
            return best;
        }
        if (e instanceof BatchUpdateException batch) {
            int[] counts = batch.getUpdateCounts();
            for (int i = 0; i < counts.length && i < messages.size(); i++) {
                if (counts[i] == Statement.EXECUTE_FAILED) {
                    return messages.get(i).id();
                }
            }
            if (counts.length < messages.size()) {
                return messages.get(counts.length).id();
            }
        }
        return messages.get(0).id();
    }

    /** Checks a message against this store's limits and what its columns can hold. */
    private void check(Message m) {
        checkLength(m, "id", m.id(), limits.maxIdLength());
        checkLength(m, "topic", m.topic(), limits.maxTopicLength());
        checkLength(m, "module", m.module(), limits.maxModuleLength());
        if (m.key().isPresent()) {
            checkLength(m, "key", m.key().get(), limits.maxKeyLength());
        }
        checkStorable(m, "contentType", m.contentType());
        if (m.payloadSize() > limits.maxPayloadBytes()) {
            throw invalid(
                    m,
                    "payload is "
                            + m.payloadSize()
                            + " bytes, over the store's "
                            + limits.maxPayloadBytes()
                            + " limit");
        }
        if (m.headers().size() > limits.maxHeaders()) {
            throw invalid(
                    m,
                    "headers has "
                            + m.headers().size()
                            + " entries, over the store's "
                            + limits.maxHeaders()
                            + " limit");
        }
        for (Map.Entry<String, String> h : m.headers().entrySet()) {
            if (h.getKey().length() > limits.maxHeaderNameLength()) {
                throw invalid(
                        m,
                        "header name '"
                                + h.getKey()
                                + "' is over the store's "
                                + limits.maxHeaderNameLength()
                                + " character limit");
            }
            if (h.getValue().length() > limits.maxHeaderValueLength()) {
                throw invalid(
                        m,
                        "header '"
                                + h.getKey()
                                + "' value is "
                                + h.getValue().length()
                                + " characters, over the store's "
                                + limits.maxHeaderValueLength()
                                + " limit");
            }
        }
        checkTime(m, "occurredAt", m.occurredAt());
        if (m.notBefore().isPresent()) {
            checkTime(m, "notBefore", m.notBefore().get());
        }
    }

    private static void checkLength(Message m, String field, String value, int max) {
        if (value.length() > max) {
            throw invalid(
                    m,
                    field
                            + " is "
                            + value.length()
                            + " characters, over the store's "
                            + max
                            + " limit");
        }
        checkStorable(m, field, value);
    }

    private static void checkStorable(Message m, String field, String value) {
        int bad = HeaderCodec.firstUnstorable(value);
        if (bad >= 0) {
            throw invalid(
                    m,
                    field
                            + " has an unpaired surrogate at index "
                            + bad
                            + ", which a database text column cannot store");
        }
    }

    private static void checkTime(Message m, String field, Instant value) {
        if (!Times.storable(value)) {
            throw invalid(
                    m,
                    field
                            + " must be between "
                            + Times.MIN
                            + " and "
                            + Times.MAX
                            + ", but was "
                            + value);
        }
    }

    private static IllegalArgumentException invalid(Message m, String problem) {
        return new IllegalArgumentException("message '" + m.id() + "': " + problem);
    }
}
