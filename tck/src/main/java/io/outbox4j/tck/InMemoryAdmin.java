package io.outbox4j.tck;

import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.tck.InMemoryStorage.Row;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The {@link OutboxAdmin} side of the reference store over its {@link InMemoryStorage}: statistics
 * judged at the instant asked for, dead letters page by page with a cursor, replay, discard and the
 * last error. Every method takes the storage's lock. {@link InMemoryOutboxStore} extends it, so it
 * stays the one public entry.
 */
abstract class InMemoryAdmin implements OutboxAdmin {
    /** Dead-letter listing order: dead-letter time, then enqueue order. */
    private static final Comparator<Row> DEAD_ORDER =
            Comparator.comparing((Row r) -> r.deadAt).thenComparingLong(r -> r.seq);

    private static final String CURSOR_VERSION = "v1";

    /** The messages, shared by every store instance built over them; also the lock. */
    final InMemoryStorage storage;

    /** Whether a dead letter holds back the later messages of its key. */
    final boolean deadLettersBlockTheirKey;

    InMemoryAdmin(InMemoryStorage storage, boolean deadLettersBlockTheirKey) {
        this.storage = storage;
        this.deadLettersBlockTheirKey = deadLettersBlockTheirKey;
    }

    @Override
    public OutboxStatistics statistics(Instant now) {
        Objects.requireNonNull(now, "now");
        synchronized (storage) {
            Counts total = new Counts();
            Map<String, Counts> byTopic = new TreeMap<>();
            Set<String> blocked = new HashSet<>();
            for (Row r : storage.rows.values()) {
                Counts topic = byTopic.computeIfAbsent(r.message.topic(), t -> new Counts());
                for (Counts c : List.of(total, topic)) {
                    c.add(r, now);
                }
                if (r.deadAt != null && r.key != null && deadLettersBlockTheirKey) {
                    blocked.add(r.key);
                }
            }
            Map<String, TopicStatistics> topics = new LinkedHashMap<>();
            byTopic.forEach((t, c) -> topics.put(t, c.toStatistics(now)));
            return new OutboxStatistics(now, total.toStatistics(now), topics, blocked.size());
        }
    }

    @Override
    public DeadLetterPage deadLetters(DeadLetterQuery query) {
        Objects.requireNonNull(query, "query");
        Cursor after = query.after().map(Cursor::decode).orElse(null);
        synchronized (storage) {
            List<Row> dead = dead(query);
            List<DeadMessage> items = new ArrayList<>();
            Row last = null;
            boolean more = false;
            for (Row r : dead) {
                if (after != null && !after.isBefore(r)) {
                    continue;
                }
                if (items.size() == query.limit()) {
                    more = true;
                    break;
                }
                items.add(deadMessage(r));
                last = r;
            }
            return new DeadLetterPage(
                    items, more && last != null ? Optional.of(Cursor.of(last)) : Optional.empty());
        }
    }

    @Override
    public int replay(List<String> ids, Instant now) {
        checkIds(ids);
        Objects.requireNonNull(now, "now");
        synchronized (storage) {
            return replayRows(byIds(ids), now);
        }
    }

    @Override
    public int replayAll(DeadLetterQuery filter, Instant now) {
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(now, "now");
        synchronized (storage) {
            return replayRows(dead(filter), now);
        }
    }

    @Override
    public int discard(List<String> ids) {
        checkIds(ids);
        synchronized (storage) {
            return discardRows(byIds(ids));
        }
    }

    @Override
    public int discardAll(DeadLetterQuery filter) {
        Objects.requireNonNull(filter, "filter");
        synchronized (storage) {
            return discardRows(dead(filter));
        }
    }

    @Override
    public Optional<String> lastError(String id) {
        Objects.requireNonNull(id, "id");
        synchronized (storage) {
            Row r = storage.rows.get(id);
            if (r == null) {
                return Optional.empty();
            }
            return Optional.ofNullable(r.deadAt != null ? r.deadReason : r.lastError);
        }
    }

    private static void checkIds(List<String> ids) {
        Objects.requireNonNull(ids, "ids");
        if (ids.size() > DeadLetterQuery.MAX_LIMIT) {
            throw new IllegalArgumentException(
                    "ids must hold at most "
                            + DeadLetterQuery.MAX_LIMIT
                            + " ids, but held "
                            + ids.size());
        }
    }

    /** The dead rows the ids name (each once), unknown and live ids left out. */
    private List<Row> byIds(List<String> ids) {
        List<Row> out = new ArrayList<>();
        for (String id : new LinkedHashSet<>(ids)) {
            Row r = storage.rows.get(Objects.requireNonNull(id, "id"));
            if (r != null && r.deadAt != null) {
                out.add(r);
            }
        }
        return out;
    }

    /** The dead rows the filter selects, oldest dead-letter time first. */
    private List<Row> dead(DeadLetterQuery filter) {
        Predicate<Row> selected = r -> r.deadAt != null && filter.matches(deadMessage(r));
        List<Row> out = new ArrayList<>();
        for (Row r : storage.rows.values()) {
            if (selected.test(r)) {
                out.add(r);
            }
        }
        out.sort(DEAD_ORDER);
        return out;
    }

    private static int replayRows(List<Row> dead, Instant now) {
        for (Row r : dead) {
            r.deadAt = null;
            r.deadReason = null;
            r.attempts = 0;
            r.availableAt = now;
        }
        return dead.size();
    }

    private int discardRows(List<Row> dead) {
        dead.forEach(storage::remove);
        return dead.size();
    }

    private static DeadMessage deadMessage(Row r) {
        return new DeadMessage( // a dead row has both: see deadLetter
                r.message,
                Objects.requireNonNull(r.deadReason),
                r.attempts,
                r.enqueuedAt,
                Objects.requireNonNull(r.deadAt));
    }

    /** Counts of one topic (or all) while the statistics are computed. */
    private static final class Counts {
        long ready;
        long delayed;
        long leased;
        long dead;
        @Nullable Instant oldestReady;

        void add(Row r, Instant now) {
            if (r.deadAt != null) {
                dead++;
            } else if (!r.availableAt.isAfter(now)) {
                ready++;
                if (oldestReady == null || r.availableAt.isBefore(oldestReady)) {
                    oldestReady = r.availableAt;
                }
            } else if (r.owner != null) {
                leased++;
            } else {
                delayed++;
            }
        }

        TopicStatistics toStatistics(Instant now) {
            Duration age = oldestReady == null ? Duration.ZERO : Duration.between(oldestReady, now);
            return new TopicStatistics(ready, delayed, leased, dead, age);
        }
    }

    /** Where a page of dead letters ended: the dead-letter time and enqueue order of its last. */
    private record Cursor(Instant deadAt, long seq) {
        static String of(Row r) {
            Instant deadAt = Objects.requireNonNull(r.deadAt); // only dead rows are listed
            String text =
                    CURSOR_VERSION
                            + ":"
                            + deadAt.getEpochSecond()
                            + ":"
                            + deadAt.getNano()
                            + ":"
                            + r.seq;
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
            } catch (IllegalArgumentException | java.time.DateTimeException e) {
                throw new IllegalArgumentException(
                        "cursor '" + cursor + "' was not issued by this store", e);
            }
        }

        /** Whether this cursor sorts before the row, so the row belongs to a later page. */
        boolean isBefore(Row r) {
            int byTime = deadAt.compareTo(r.deadAt);
            return byTime < 0 || (byTime == 0 && seq < r.seq);
        }
    }
}
