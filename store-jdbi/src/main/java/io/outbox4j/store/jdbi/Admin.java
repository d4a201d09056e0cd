package io.outbox4j.store.jdbi;

import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jdbi.v3.core.statement.Query;
import org.jspecify.annotations.Nullable;

/**
 * The operator's side ({@link io.outbox4j.api.OutboxAdmin}) over a dialect. Statistics scan the
 * table (one grouped query); dead letters are listed through the dead-letter index with a keyset
 * cursor; replay and discard work in chunks of at most {@value DeadLetterQuery#MAX_LIMIT} rows,
 * each its own short transaction.
 */
final class Admin {
    private static final String CURSOR_VERSION = "v1";
    private static final String DEAD_COLUMNS =
            SqlDialect.MESSAGE_COLUMNS + ", dead_at, dead_reason";

    private final SqlDialect dialect;
    private final Db db;

    Admin(SqlDialect dialect, Db db) {
        this.dialect = dialect;
        this.db = db;
    }

    OutboxStatistics statistics(Instant now) {
        Objects.requireNonNull(now, "now");
        Instant at = Times.decision(now);
        Map<String, TopicStatistics> byTopic = new LinkedHashMap<>();
        long[] total = new long[4];
        Instant[] oldest = new Instant[1];
        db.statement(
                "statistics",
                h ->
                        h.createQuery(dialect.statistics)
                                .bind("now", dialect.time(at))
                                .map(
                                        (rs, ctx) -> {
                                            long[] c = {
                                                rs.getLong("n_ready"),
                                                rs.getLong("n_delayed"),
                                                rs.getLong("n_leased"),
                                                rs.getLong("n_dead")
                                            };
                                            Instant o = dialect.getTime(rs, "oldest_ready");
                                            byTopic.put(rs.getString("topic"), counts(c, o, now));
                                            for (int i = 0; i < c.length; i++) {
                                                total[i] += c[i];
                                            }
                                            if (o != null
                                                    && (oldest[0] == null
                                                            || o.isBefore(oldest[0]))) {
                                                oldest[0] = o;
                                            }
                                            return c;
                                        })
                                .list());
        long blocked =
                dialect.deadLettersBlock
                        ? db.statement(
                                "statistics",
                                h -> h.createQuery(dialect.blockedKeys).mapTo(Long.class).one())
                        : 0;
        return new OutboxStatistics(now, counts(total, oldest[0], now), byTopic, blocked);
    }

    private static TopicStatistics counts(long[] c, @Nullable Instant oldestReady, Instant now) {
        Duration age =
                oldestReady == null || oldestReady.isAfter(now)
                        ? Duration.ZERO
                        : Duration.between(oldestReady, now);
        return new TopicStatistics(c[0], c[1], c[2], c[3], age);
    }

    DeadLetterPage deadLetters(DeadLetterQuery query) {
        Objects.requireNonNull(query, "query");
        Optional<Cursor> after = query.after().map(Cursor::decode);
        List<DeadRow> rows =
                db.statement(
                        "dead-letter listing",
                        h ->
                                filtered(h, DEAD_COLUMNS, query, after, query.limit() + 1)
                                        .map(
                                                (rs, ctx) ->
                                                        new DeadRow(
                                                                StoredRow.read(rs, dialect),
                                                                dialect.requireTime(rs, "dead_at"),
                                                                rs.getString("dead_reason")))
                                        .list());
        List<DeadMessage> items = new ArrayList<>();
        int shown = Math.min(rows.size(), query.limit());
        for (DeadRow r : rows.subList(0, shown)) {
            // A row that is not a valid message cannot be shown as one; discard(id) removes it.
            if (r.row.message != null) {
                items.add(
                        new DeadMessage(
                                r.row.message,
                                r.reason,
                                r.row.attempts,
                                r.row.enqueuedAt,
                                r.deadAt));
            }
        }
        Optional<String> next =
                rows.size() > query.limit()
                        ? Optional.of(Cursor.of(rows.get(shown - 1)))
                        : Optional.empty();
        return new DeadLetterPage(items, next);
    }

    int replay(List<String> ids, Instant now) {
        List<String> unique = checkIds(ids);
        Objects.requireNonNull(now, "now");
        if (unique.isEmpty()) {
            return 0;
        }
        Instant at = Times.decision(now);
        return db.statement(
                "replay",
                h ->
                        h.createUpdate(dialect.replay)
                                .bind("now", dialect.time(at))
                                .bindList("ids", unique)
                                .execute());
    }

    int replayAll(DeadLetterQuery filter, Instant now) {
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(now, "now");
        int replayed = 0;
        for (List<String> ids = deadIds(filter); !ids.isEmpty(); ids = deadIds(filter)) {
            replayed += replay(ids, now);
            if (ids.size() < DeadLetterQuery.MAX_LIMIT) {
                break;
            }
        }
        return replayed;
    }

    /** Deletes dead letters and unparks their keys, under their buckets' locks. */
    int discard(List<String> ids) {
        List<String> unique = checkIds(ids);
        if (unique.isEmpty()) {
            return 0;
        }
        return db.transaction(
                "discard",
                h -> {
                    dialect.lockBucketsOfIds(h, unique);
                    Removed<String> removed = dialect.deleteDead(h, unique);
                    dialect.unpark(h, removed.keys());
                    return removed.removed().size();
                });
    }

    int discardAll(DeadLetterQuery filter) {
        Objects.requireNonNull(filter, "filter");
        int discarded = 0;
        for (List<String> ids = deadIds(filter); !ids.isEmpty(); ids = deadIds(filter)) {
            discarded += discard(ids);
            if (ids.size() < DeadLetterQuery.MAX_LIMIT) {
                break;
            }
        }
        return discarded;
    }

    Optional<String> lastError(String id) {
        Objects.requireNonNull(id, "id");
        return db.statement(
                "last error",
                h ->
                        h.createQuery(dialect.lastError)
                                .bind("id", id)
                                .map(
                                        (rs, ctx) ->
                                                Optional.ofNullable(
                                                        rs.getObject("dead_at") != null
                                                                ? rs.getString("dead_reason")
                                                                : rs.getString("last_error")))
                                .findOne()
                                .flatMap(e -> e));
    }

    /** The first chunk of dead letters the filter selects. */
    private List<String> deadIds(DeadLetterQuery filter) {
        return db.statement(
                "dead-letter selection",
                h ->
                        filtered(h, "id", filter, Optional.empty(), DeadLetterQuery.MAX_LIMIT)
                                .mapTo(String.class)
                                .list());
    }

    private Query filtered(
            org.jdbi.v3.core.Handle h,
            String columns,
            DeadLetterQuery q,
            Optional<Cursor> after,
            int limit) {
        Query query =
                h.createQuery(
                                dialect.deadLetters(
                                        columns,
                                        q.topic().isPresent(),
                                        q.deadFrom().isPresent(),
                                        q.deadBefore().isPresent(),
                                        after.isPresent()))
                        .bind("limit", limit);
        q.topic().ifPresent(t -> query.bind("topic", t));
        q.deadFrom().ifPresent(t -> query.bind("deadFrom", dialect.time(Times.decision(t))));
        q.deadBefore().ifPresent(t -> query.bind("deadBefore", dialect.time(Times.decision(t))));
        after.ifPresent(c -> query.bind("afterAt", dialect.time(c.deadAt)).bind("afterSeq", c.seq));
        return query;
    }

    private static List<String> checkIds(List<String> ids) {
        Objects.requireNonNull(ids, "ids");
        if (ids.size() > DeadLetterQuery.MAX_LIMIT) {
            throw new IllegalArgumentException(
                    "ids must hold at most "
                            + DeadLetterQuery.MAX_LIMIT
                            + " ids, but held "
                            + ids.size());
        }
        LinkedHashSet<String> unique = new LinkedHashSet<>();
        for (String id : ids) {
            if (id == null) {
                throw new IllegalArgumentException("ids must not contain null");
            }
            unique.add(id);
        }
        return new ArrayList<>(unique);
    }

    private record DeadRow(StoredRow row, Instant deadAt, String reason) {}

    /** Where a page of dead letters ended: the dead-letter time and enqueue order of its last. */
    private record Cursor(Instant deadAt, long seq) {
        static String of(DeadRow r) {
            String text =
                    CURSOR_VERSION
                            + ":"
                            + r.deadAt.getEpochSecond()
                            + ":"
                            + r.deadAt.getNano()
                            + ":"
                            + r.row.seq;
            return Base64.getUrlEncoder()
                    .withoutPadding()
                    .encodeToString(text.getBytes(StandardCharsets.UTF_8));
        }

        static Cursor decode(String cursor) {
            try {
                String[] parts =
                        new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8)
                                .split(":", -1);
                if (parts.length != 4 || !parts[0].equals(CURSOR_VERSION)) {
                    throw new IllegalArgumentException("unknown cursor format");
                }
                return new Cursor(
                        Instant.ofEpochSecond(Long.parseLong(parts[1]), Long.parseLong(parts[2])),
                        Long.parseLong(parts[3]));
            } catch (IllegalArgumentException | DateTimeException e) {
                throw new IllegalArgumentException(
                        "cursor '" + cursor + "' was not issued by this store", e);
            }
        }
    }
}
