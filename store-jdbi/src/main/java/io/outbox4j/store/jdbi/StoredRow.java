package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * A message row as read back from the table ({@link SqlDialect#MESSAGE_COLUMNS}): the message, or
 * why the stored values do not make one (a row written by hand), and the store's bookkeeping.
 */
final class StoredRow {
    /** Width of the id, topic, msg_key and module columns, in characters. */
    static final int COLUMN_LENGTH = 255;

    /**
     * Messages read back were checked when enqueued; reading them must not fail on a lowered limit.
     */
    private static final MessageLimits READ_LIMITS =
            new MessageLimits(
                    COLUMN_LENGTH,
                    COLUMN_LENGTH,
                    COLUMN_LENGTH,
                    COLUMN_LENGTH,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE,
                    Integer.MAX_VALUE);

    final String id;
    final long seq;
    final String key;
    final int attempts;
    final Instant enqueuedAt;
    final Message message;
    final String unreadable;

    private StoredRow(
            String id,
            long seq,
            String key,
            int attempts,
            Instant enqueuedAt,
            Message message,
            String unreadable) {
        this.id = id;
        this.seq = seq;
        this.key = key;
        this.attempts = attempts;
        this.enqueuedAt = enqueuedAt;
        this.message = message;
        this.unreadable = unreadable;
    }

    /** Reads the {@link SqlDialect#MESSAGE_COLUMNS} of the current row. */
    static StoredRow read(ResultSet rs, SqlDialect dialect) throws SQLException {
        String id = rs.getString("id");
        String key = rs.getString("msg_key");
        Message message = null;
        String unreadable = null;
        try {
            message =
                    Message.builder()
                            .limits(READ_LIMITS)
                            .id(id)
                            .topic(rs.getString("topic"))
                            .key(key)
                            .module(rs.getString("module"))
                            .contentType(rs.getString("content_type"))
                            .payload(rs.getBytes("payload"))
                            .headers(HeaderCodec.decode(rs.getString("headers")))
                            .occurredAt(dialect.getTime(rs, "occurred_at"))
                            .notBefore(dialect.getTime(rs, "not_before"))
                            .build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            unreadable = e.getMessage();
        }
        return new StoredRow(
                id,
                rs.getLong("seq"),
                key,
                rs.getInt("attempts"),
                dialect.getTime(rs, "enqueued_at"),
                message,
                unreadable);
    }

    /** The same row with one more attempt counted (a claim read it before leasing it). */
    StoredRow withOneMoreAttempt() {
        return new StoredRow(id, seq, key, attempts + 1, enqueuedAt, message, unreadable);
    }
}
