package io.outbox4j.faulttests;

import io.outbox4j.api.Member;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Samples, every {@code everyMillis} on a thread of its own, what the outbox database says about
 * its members ({@code OutboxMembership.members()}: id, live by the database's clock, buckets) and
 * which sessions of the database are busy (PostgreSQL {@code pg_stat_activity}: state, what they
 * wait for, how long their transaction has been open, their statement), for a drill's figures: it
 * shows a handover as the database saw it, and what a stalled member was waiting for.
 */
final class DbTimeline implements AutoCloseable {
    private static final String SESSIONS =
            "SELECT state, coalesce(wait_event_type || ':' || wait_event, '-'),"
                    + " CAST(extract(epoch FROM clock_timestamp() - xact_start) * 1000 AS bigint),"
                    + " left(regexp_replace(query, '\\s+', ' ', 'g'), 140)"
                    + " FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND pid <> pg_backend_pid() AND state <> 'idle'"
                    + " AND xact_start < clock_timestamp() - interval '100 milliseconds'"
                    + " ORDER BY xact_start";

    private final OutboxDatabase db;
    private final long fromMillis;
    private final long everyMillis;
    private final List<Map<String, Object>> samples = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    private DbTimeline(OutboxDatabase db, long fromMillis, long everyMillis) {
        this.db = db;
        this.fromMillis = fromMillis;
        this.everyMillis = everyMillis;
        this.thread = new Thread(this::run, "db-timeline");
        thread.setDaemon(true);
    }

    /**
     * Starts sampling.
     *
     * @param db the drill's database
     * @param fromMillis the fault's time (epoch ms): samples are stamped with ms since then
     * @param everyMillis the sampling interval
     * @return the running timeline
     */
    static DbTimeline start(OutboxDatabase db, long fromMillis, long everyMillis) {
        DbTimeline t = new DbTimeline(db, fromMillis, everyMillis);
        t.thread.start();
        return t;
    }

    private void run() {
        while (running) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("t", System.currentTimeMillis() - fromMillis);
            try {
                List<String> members = new ArrayList<>();
                for (Member m : db.store().members()) {
                    members.add(m.id() + (m.live() ? " live " : " expired ") + m.buckets());
                }
                s.put("members", members);
                s.put(
                        "sessionsInTransactionOver100ms",
                        db.jdbi()
                                .withHandle(
                                        h ->
                                                h.createQuery(SESSIONS)
                                                        .map(
                                                                (rs, ctx) ->
                                                                        rs.getString(1)
                                                                                + " | "
                                                                                + rs.getString(2)
                                                                                + " | xact "
                                                                                + rs.getLong(3)
                                                                                + " ms | "
                                                                                + rs.getString(4))
                                                        .list()));
            } catch (RuntimeException e) {
                s.put("error", e.toString());
            }
            synchronized (samples) {
                samples.add(s);
            }
            try {
                Thread.sleep(everyMillis);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The samples so far. */
    List<Map<String, Object>> samples() {
        synchronized (samples) {
            return List.copyOf(samples);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5_000);
    }
}
