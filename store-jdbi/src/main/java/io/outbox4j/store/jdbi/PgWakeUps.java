package io.outbox4j.store.jdbi;

import io.outbox4j.api.OutboxWakeUps;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cross-process wake-ups on PostgreSQL (docs/relay.md): LISTEN/NOTIFY, kept out of the callers'
 * transactions. A transaction that runs NOTIFY takes a lock shared by the whole database at commit,
 * so enqueue never notifies; the writing store's {@link Signal} sends one coalesced {@code
 * pg_notify} on a connection of its own after the commits it learns of, and a relay's listener
 * LISTENs on a connection of its own and wakes the relay.
 *
 * <p>The channel is {@code outbox4j:<table>} (cut at PostgreSQL's 63 bytes: two long names that
 * share a prefix only wake each other's relays for nothing).
 */
final class PgWakeUps implements OutboxWakeUps {
    private static final Logger LOG = LoggerFactory.getLogger(PgWakeUps.class);

    /** How long one wait for notifications lasts, hence how long {@code close()} may wait. */
    static final int WAIT_MILLIS = 250;

    /** The first pause before reconnecting a dropped listener; doubled up to {@link #MAX_PAUSE}. */
    static final Duration FIRST_PAUSE = Duration.ofMillis(100);

    /** The longest pause between reconnections. */
    static final Duration MAX_PAUSE = Duration.ofSeconds(5);

    private final Jdbi jdbi;
    private final String channel;
    private final String notify;
    private final Signal signal;

    PgWakeUps(Jdbi jdbi, String tableName) {
        this.jdbi = jdbi;
        this.channel = channel(tableName);
        // The channel is a validated table name with a fixed prefix: no quote can occur in it.
        this.notify = "SELECT pg_notify('" + channel + "', '')";
        this.signal = new Signal(this::notifyNow, "outbox4j-notify-" + tableName);
    }

    /** The channel of a table: {@code outbox4j:<table>}, at most 63 characters. */
    static String channel(String tableName) {
        String c = "outbox4j:" + tableName;
        return c.length() <= 63 ? c : c.substring(0, 63);
    }

    /**
     * Called on the caller's thread after an enqueue through a Jdbi handle: signals after the
     * commit of the handle's transaction (Jdbi runs the callback), at once in auto-commit mode.
     */
    void enqueued(Handle handle) {
        if (handle.isInTransaction()) {
            handle.afterCommit(signal::now);
        } else {
            signal.now();
        }
    }

    /**
     * Called on the caller's thread after an enqueue through a plain JDBC connection: at once in
     * auto-commit mode; otherwise the commit is not seen, so a few times soon after ({@link
     * Signal#unsure()}).
     */
    void enqueued(Connection connection) {
        boolean autoCommit;
        try {
            autoCommit = connection.getAutoCommit();
        } catch (SQLException e) {
            autoCommit = false;
        }
        if (autoCommit) {
            signal.now();
        } else {
            signal.unsure();
        }
    }

    /** Sends one notification, on a connection of its own, outside any caller's transaction. */
    private void notifyNow() {
        try (Handle h = jdbi.open();
                PreparedStatement st = h.getConnection().prepareStatement(notify)) {
            st.execute();
            if (!h.getConnection().getAutoCommit()) {
                h.getConnection().commit();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** Listens on a thread and a connection of its own ({@code wakeUp} checked by the store). */
    @Override
    public Listening listen(Runnable wakeUp) {
        Listener l = new Listener(wakeUp);
        Thread t = new Thread(l::run, "outbox4j-listen-" + channel);
        t.setDaemon(true);
        t.start();
        return l;
    }

    /** One LISTEN connection, reconnected when it drops, until closed. */
    private final class Listener implements Listening {
        private final Runnable wakeUp;
        private final CountDownLatch closing = new CountDownLatch(1);
        private final CountDownLatch stopped = new CountDownLatch(1);
        private volatile boolean closed;

        Listener(Runnable wakeUp) {
            this.wakeUp = wakeUp;
        }

        void run() {
            Duration pause = FIRST_PAUSE;
            boolean failing = false;
            try {
                while (!closed) {
                    try (Handle h = jdbi.open()) {
                        Connection c = h.getConnection();
                        c.setAutoCommit(true);
                        try (Statement st = c.createStatement()) {
                            st.execute("LISTEN \"" + channel + '"');
                        }
                        PGConnection pg = c.unwrap(PGConnection.class);
                        if (failing) {
                            LOG.info("outbox4j: listening on channel '{}' again", channel);
                        }
                        failing = false;
                        pause = FIRST_PAUSE;
                        wake(); // commits made while not listening are claimed now
                        while (!closed) {
                            PGNotification[] n = pg.getNotifications(WAIT_MILLIS);
                            if (n != null && n.length > 0) {
                                wake();
                            }
                        }
                        try (Statement st = c.createStatement()) {
                            st.execute("UNLISTEN *"); // the connection may go back to a pool
                        }
                    } catch (SQLException | RuntimeException e) {
                        if (closed) {
                            break;
                        }
                        // Once per outage at WARN (the relay's own store errors say the rest).
                        if (!failing) {
                            failing = true;
                            LOG.warn(
                                    "outbox4j: listening on channel '{}' failed, the relay polls"
                                            + " until it listens again (trying every {} ms to"
                                            + " {} s): {}",
                                    channel,
                                    FIRST_PAUSE.toMillis(),
                                    MAX_PAUSE.toSeconds(),
                                    e.toString());
                        } else {
                            LOG.debug("outbox4j: listening on channel '{}' failed: {}", channel, e);
                        }
                        if (closing.await(pause.toMillis(), TimeUnit.MILLISECONDS)) {
                            break;
                        }
                        pause =
                                pause.multipliedBy(2).compareTo(MAX_PAUSE) > 0
                                        ? MAX_PAUSE
                                        : pause.multipliedBy(2);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                stopped.countDown();
            }
        }

        private void wake() {
            if (closed) {
                return;
            }
            try {
                wakeUp.run();
            } catch (RuntimeException e) {
                LOG.warn("outbox4j: a wake-up on channel '{}' failed: {}", channel, e.toString());
            }
        }

        @Override
        public void close() {
            closed = true;
            closing.countDown();
            try {
                // The listener checks at least every WAIT_MILLIS; its connection goes back then.
                stopped.await(2L * WAIT_MILLIS + 1000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
