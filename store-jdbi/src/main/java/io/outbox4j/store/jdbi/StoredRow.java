package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

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
    final @Nullable String key;
    final int attempts;
    final Instant enqueuedAt;
    final @Nullable Message message;
    final @Nullable String unreadable;

    private StoredRow(
            String id,
            long seq,
            @Nullable String key,
            int attempts,
            Instant enqueuedAt,
            @Nullable Message message,
            @Nullable String unreadable) {
        this.id = id;
        this.seq = seq;
        this.key = key;
        this.attempts = attempts;
        this.enqueuedAt = enqueuedAt;
        this.message = message;
        this.unreadable = unreadable;
    }

    /** Reads the {@link SqlDialect#MESSAGE_COLUMNS}, the first columns of the current row. */
    static StoredRow read(ResultSet rs, SqlDialect dialect) throws SQLException {
        return read(rs, dialect, 1);
    }

    /**
     * Reads the {@link SqlDialect#MESSAGE_COLUMNS} of the current row by position, starting at
     * column {@code first} (1 for a row that begins with them).
     */
    static StoredRow read(ResultSet rs, SqlDialect dialect, int first) throws SQLException {
        String id = rs.getString(first);
        String key = rs.getString(first + 3);
        Message message = null;
        String unreadable = null;
        try {
            message =
                    Message.builder()
                            .limits(READ_LIMITS)
                            .id(id)
                            .topic(rs.getString(first + 2))
                            .key(key)
                            .module(rs.getString(first + 4))
                            .contentType(rs.getString(first + 5))
                            .payload(rs.getBytes(first + 6))
                            .headers(HeaderCodec.decode(rs.getString(first + 7)))
                            .occurredAt(dialect.requireTime(rs, first + 8))
                            .notBefore(dialect.getTime(rs, first + 9))
                            .build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            unreadable = e.getMessage();
        }
        return new StoredRow(
                id,
                rs.getLong(first + 1),
                key,
                rs.getInt(first + 11),
                dialect.requireTime(rs, first + 10),
                message,
                unreadable);
    }

    /** The same row with one more attempt counted (a claim read it before leasing it). */
    StoredRow withOneMoreAttempt() {
        return new StoredRow(id, seq, key, attempts + 1, enqueuedAt, message, unreadable);
    }
}
