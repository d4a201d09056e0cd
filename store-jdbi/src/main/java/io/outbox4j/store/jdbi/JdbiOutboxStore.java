package io.outbox4j.store.jdbi;

import com.google.errorprone.annotations.Immutable;
import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.api.Release;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jspecify.annotations.Nullable;

/**
 * An outbox in one table of a relational database, through Jdbi 3: PostgreSQL 15+, MariaDB 10.6+,
 * MySQL 8 and H2 2.x.
 *
 * <pre>{@code
 * JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi)
 *         .tableName("outbox_message")            // the default
 *         .build();                               // the dialect is detected from the connection
 * store.createSchemaIfAbsent();                   // or run store.dialect().ddlResource() as a migration
 *
 * jdbi.useTransaction(h -> {
 *     h.execute("insert into orders ...");
 *     store.enqueue(h, message);                  // commits or rolls back with the order
 * });
 * store.jdbc().enqueue(connection, message);      // the same through a plain JDBC connection
 * }</pre>
 *
 * <p><b>Write side</b> ({@link Outbox}): inserts through the caller's own {@link Handle} or {@link
 * Connection}, in the caller's transaction, and never commits, rolls back or closes it; a batch is
 * one JDBC batch (one round trip). A handle or connection in auto-commit mode is refused with an
 * {@link IllegalArgumentException}, because the message would commit on its own, apart from the
 * business change; {@link Builder#allowEnqueueOutsideTransaction(boolean)} lets a store accept it
 * (each call then commits by itself, a batch all or nothing).
 *
 * <p><b>Dispatch side</b> ({@link OutboxStore}): opens its own short-lived handles from the {@link
 * Jdbi}; a claim is one short transaction, never held open while messages are published. Per-key
 * order is kept by the store (docs/per-key-order.md): each candidate's predecessor of its key is
 * found by one index probe, and a keyed message found behind an unfinished earlier one is
 * <em>parked</em> (out of the claim index) until that one is completed or discarded; parking and
 * unparking take a lock per bucket of the key space, never one lock shared by every claimer.
 *
 * <p><b>Membership</b> ({@link OutboxMembership}, docs/scale-out.md): relays sharing the table are
 * members with leases judged by the database's clock, the 256 buckets of the key space are spread
 * over them, and a claim made as a member takes keyed messages only of its buckets, checked inside
 * the claim by the database's clock. Dead letters block their key unless the store is built with
 * {@link Builder#deadLettersBlockTheirKey(boolean) deadLettersBlockTheirKey(false)}; every store
 * over one table must be built alike.
 *
 * <p><b>Admin side</b> ({@link OutboxAdmin}): statistics, dead letters, replay, discard, last
 * errors.
 *
 * <p>Times are stored in UTC with microsecond precision. Dead-lettered rows stay in the table with
 * their reason, attempt count and time until replayed or discarded. Database failures are thrown as
 * {@link OutboxException}s that carry the driver's message.
 *
 * <p>Instances are immutable and safe for use by any number of threads and processes at once.
 */
public final class JdbiOutboxStore
        implements OutboxStore, OutboxAdmin, OutboxMembership, OutboxWakeUps, Outbox<Handle> {
    /** The table name used when none is configured. */
    public static final String DEFAULT_TABLE_NAME = "outbox_message";

    /** The databases this store speaks to. */
    public enum Dialect {
        /** PostgreSQL 15 or later. */
        POSTGRESQL("postgresql.sql", '"', PostgresDialect::new),
        /** MariaDB 10.6 or later. */
        MARIADB("mariadb.sql", '`', MariaDbDialect::new),
        /**
         * MySQL 8.0 or later (MariaDB's schema and statements; its own DDL, as MySQL has no ADD
         * COLUMN IF NOT EXISTS).
         */
        MYSQL("mysql.sql", '`', MySqlDialect::new),
        /** H2 2.x. */
        H2("h2.sql", '"', H2Dialect::new);

        private final String ddlFile;
        private final char quote;
        private final Factory factory;

        Dialect(String ddlFile, char quote, Factory factory) {
            this.ddlFile = ddlFile;
            this.quote = quote;
            this.factory = factory;
        }

        /**
         * Returns the classpath resource holding this dialect's DDL for the default table name,
         * usable as it is as a Flyway or Liquibase migration.
         *
         * @return a resource path such as {@code io/outbox4j/store/jdbi/postgresql.sql}
         */
        public String ddlResource() {
            return "io/outbox4j/store/jdbi/" + ddlFile;
        }

        char quote() {
            return quote;
        }

        SqlDialect create(String tableName, boolean deadLettersBlock) {
            return factory.create(tableName, deadLettersBlock);
        }
    }

    /** Makes the dialect object of a {@link Dialect}. */
    @FunctionalInterface
    @Immutable // an enum constant holds one: constructor references, no state
    interface Factory {
        SqlDialect create(String tableName, boolean deadLettersBlock);
    }

    private final Jdbi jdbi;
    private final Dialect dialect;
    private final MessageLimits limits;
    private final SqlDialect sql;
    private final Db db;
    private final Writer writer;
    private final Dispatcher dispatcher;
    private final Admin admin;
    private final Members members;
    private final @Nullable PgWakeUps wakeUps; // null except on PostgreSQL
    private final boolean signalCommits;
    private final Outbox<Connection> jdbc = new JdbcOutbox();

    private JdbiOutboxStore(Builder b, Dialect dialect) {
        this.jdbi = b.jdbi;
        this.dialect = dialect;
        this.limits = b.limits;
        this.sql = dialect.create(b.tableName, b.deadLettersBlockTheirKey);
        this.db = new Db(jdbi, sql, dialect.ddlResource());
        this.writer = new Writer(sql, db, limits, b.clock, b.enqueueOutsideTransaction);
        this.dispatcher = new Dispatcher(sql, db);
        this.admin = new Admin(sql, db);
        this.members = new Members(sql, db);
        this.wakeUps = dialect == Dialect.POSTGRESQL ? new PgWakeUps(jdbi, b.tableName) : null;
        this.signalCommits = b.signalCommits && wakeUps != null;
    }

    /**
     * Starts a store over a {@link Jdbi} (give it a pooled {@code DataSource} in production).
     *
     * @param jdbi where the dispatch and admin sides open their handles
     * @return a new builder
     * @throws IllegalArgumentException if {@code jdbi} is null
     */
    public static Builder builder(Jdbi jdbi) {
        if (jdbi == null) {
            throw new IllegalArgumentException("jdbi must not be null");
        }
        return new Builder(jdbi);
    }

    /**
     * Returns the dialect, given or detected.
     *
     * @return the dialect
     */
    public Dialect dialect() {
        return dialect;
    }

    /**
     * Returns the table name (unquoted).
     *
     * @return the table name
     */
    public String tableName() {
        return sql.tableName;
    }

    /**
     * Returns the limits messages are checked against on enqueue.
     *
     * @return the limits
     */
    public MessageLimits limits() {
        return limits;
    }

    /**
     * Whether a dead letter holds back the later messages of its key.
     *
     * @return {@code true} unless built with {@code deadLettersBlockTheirKey(false)}
     */
    public boolean deadLettersBlockTheirKey() {
        return sql.deadLettersBlock;
    }

    /**
     * Creates the table, its indexes and its lock table unless they exist, from the dialect's DDL
     * resource with the configured table name. Run it once at startup, or run {@link
     * Dialect#ddlResource()} as a migration instead.
     *
     * @throws OutboxException if the database refuses the DDL
     */
    public void createSchemaIfAbsent() {
        List<String> statements = Schema.statements(dialect, sql.tableName);
        try (Handle h = jdbi.open()) {
            Connection c = h.getConnection();
            try (Statement st = c.createStatement()) {
                for (String ddl : statements) {
                    st.execute(ddl);
                }
                if (!c.getAutoCommit()) {
                    c.commit();
                }
            }
        } catch (SQLException | JdbiException e) {
            throw new OutboxException(
                    "creating table "
                            + db.quotedName()
                            + " from "
                            + dialect.ddlResource()
                            + " failed: "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * Returns the write side for plain JDBC users (Spring, JPA): it inserts through the caller's
     * {@link Connection} exactly as {@link #enqueue(Handle, Message)} does through a handle.
     *
     * @return an outbox whose transaction handle is a JDBC connection
     */
    public Outbox<Connection> jdbc() {
        return jdbc;
    }

    /**
     * Inserts one message through the caller's handle, in the caller's transaction.
     *
     * @param transaction the caller's handle, in a transaction; neither committed nor closed here
     * @param message the message
     * @throws DuplicateMessageException if the id is already in the outbox; the caller's
     *     transaction stays usable and the caller decides whether to commit or roll it back
     * @throws IllegalArgumentException if the handle is in auto-commit mode (unless allowed) or the
     *     message breaks this store's limits
     * @throws OutboxException if the table is missing or the insert fails otherwise
     */
    @Override
    public void enqueue(Handle transaction, Message message) {
        enqueueAll(transaction, listOf(message));
    }

    /**
     * Inserts messages through the caller's handle, in one JDBC batch. Either all are inserted or
     * none.
     *
     * @param transaction the caller's handle, in a transaction; neither committed nor closed here
     * @param messages the messages, in order
     * @throws DuplicateMessageException if an id is already in the outbox or appears twice in the
     *     list; nothing of the batch is left inserted and the caller's transaction stays usable
     * @throws IllegalArgumentException if the handle is in auto-commit mode (unless allowed) or a
     *     message breaks this store's limits
     * @throws OutboxException if the table is missing or the insert fails otherwise
     */
    @Override
    public void enqueueAll(Handle transaction, List<Message> messages) {
        if (transaction == null) {
            throw new IllegalArgumentException("transaction must not be null");
        }
        writer.insert(
                transaction.getConnection(),
                messages,
                "enqueue inside jdbi.useTransaction(...) or jdbi.inTransaction(...)");
        PgWakeUps w = wakeUps; // set whenever signalCommits is

        if (signalCommits && w != null && !messages.isEmpty()) {
            w.enqueued(transaction);
        }
    }

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        return dispatcher.claim(request);
    }

    @Override
    public Set<String> complete(Completion completion) {
        return dispatcher.complete(completion);
    }

    @Override
    public boolean release(Release release) {
        return dispatcher.release(release);
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        return dispatcher.deadLetter(deadLetter);
    }

    @Override
    public Set<String> extend(Extension extension) {
        return dispatcher.extend(extension);
    }

    @Override
    public Set<String> abandon(Abandonment abandonment) {
        return dispatcher.abandon(abandonment);
    }

    /**
     * Listens for commits of messages to this table by any process (docs/relay.md, cross-process
     * wake-up). On PostgreSQL: LISTEN on a connection of its own from the {@link Jdbi} (held while
     * listening, reconnected when it drops), woken by the one coalesced {@code pg_notify} that a
     * writing store sends on a connection of its own after the commits it sees — never inside the
     * caller's transaction. A commit of a Jdbi transaction is seen; a plain JDBC connection's
     * commit is not, so its enqueues are signalled 5 ms later and then backing off until they are a
     * second old. On MariaDB, MySQL and H2 the listening never wakes: relays poll.
     */
    @Override
    public Listening listen(Runnable wakeUp) {
        if (wakeUp == null) {
            throw new IllegalArgumentException("wakeUp must not be null");
        }
        return wakeUps != null ? wakeUps.listen(wakeUp) : () -> {};
    }

    @Override
    public Membership renew(String member, Duration lease) {
        return members.renew(member, lease);
    }

    @Override
    public void leave(String member) {
        members.leave(member);
    }

    @Override
    public List<Member> members() {
        return members.members();
    }

    /** For tests in this package: forgets every member and bucket owner. */
    void clearMembers() {
        members.clear();
    }

    @Override
    public OutboxStatistics statistics(Instant now) {
        return admin.statistics(now);
    }

    @Override
    public DeadLetterPage deadLetters(DeadLetterQuery query) {
        return admin.deadLetters(query);
    }

    @Override
    public int replay(List<String> ids, Instant now) {
        return admin.replay(ids, now);
    }

    @Override
    public int replayAll(DeadLetterQuery filter, Instant now) {
        return admin.replayAll(filter, now);
    }

    @Override
    public int discard(List<String> ids) {
        return admin.discard(ids);
    }

    @Override
    public int discardAll(DeadLetterQuery filter) {
        return admin.discardAll(filter);
    }

    @Override
    public Optional<String> lastError(String id) {
        return admin.lastError(id);
    }

    /** The dialect object of this store, for tests in this package. */
    SqlDialect sql() {
        return sql;
    }

    @Override
    public String toString() {
        return "JdbiOutboxStore[dialect=" + dialect + ", table=" + sql.tableName + "]";
    }

    private static List<Message> listOf(Message message) {
        if (message == null) {
            throw new IllegalArgumentException("message must not be null");
        }
        return List.of(message);
    }

    /** The write side over a plain JDBC connection. */
    private final class JdbcOutbox implements Outbox<Connection> {
        @Override
        public void enqueue(Connection transaction, Message message) {
            enqueueAll(transaction, listOf(message));
        }

        @Override
        public void enqueueAll(Connection transaction, List<Message> messages) {
            if (transaction == null) {
                throw new IllegalArgumentException("transaction must not be null");
            }
            writer.insert(
                    transaction,
                    messages,
                    "call connection.setAutoCommit(false) first and commit when the business"
                            + " change is done");
            PgWakeUps w = wakeUps; // set whenever signalCommits is

            if (signalCommits && w != null && !messages.isEmpty()) {
                w.enqueued(transaction);
            }
        }

        @Override
        public String toString() {
            return JdbiOutboxStore.this + ".jdbc()";
        }
    }

    /** Configures a {@link JdbiOutboxStore}; every setter validates its argument at once. */
    public static final class Builder {
        private final Jdbi jdbi;
        private @Nullable Dialect dialect;
        private String tableName = DEFAULT_TABLE_NAME;
        private MessageLimits limits = MessageLimits.DEFAULTS;
        private Clock clock = Clock.systemUTC();
        private boolean deadLettersBlockTheirKey = true;
        private boolean enqueueOutsideTransaction;
        private boolean signalCommits = true;

        private Builder(Jdbi jdbi) {
            this.jdbi = jdbi;
        }

        /**
         * Sets the dialect. Without it, {@link #build()} detects it from the connection's metadata.
         *
         * @param dialect the dialect
         * @return this builder
         * @throws IllegalArgumentException if {@code dialect} is null
         */
        public Builder dialect(Dialect dialect) {
            if (dialect == null) {
                throw new IllegalArgumentException("dialect must not be null");
            }
            this.dialect = dialect;
            return this;
        }

        /**
         * Sets the table name; it is quoted in every statement, so it is case-sensitive. The claim
         * lock of MariaDB, MySQL and H2 lives in a companion table named after it ({@code
         * <tableName>_lock}).
         *
         * @param tableName a plain identifier of at most 63 characters, by default {@value
         *     JdbiOutboxStore#DEFAULT_TABLE_NAME}
         * @return this builder
         * @throws IllegalArgumentException if the name does not match {@code
         *     [A-Za-z_][A-Za-z0-9_]{0,62}}
         */
        public Builder tableName(String tableName) {
            if (tableName == null || !SqlDialect.TABLE_NAME.matcher(tableName).matches()) {
                throw new IllegalArgumentException(
                        "tableName must match "
                                + SqlDialect.TABLE_NAME.pattern()
                                + ", but was "
                                + (tableName == null ? "null" : "'" + tableName + "'"));
            }
            this.tableName = tableName;
            return this;
        }

        /**
         * Sets the limits messages are checked against on enqueue. Ids, topics, keys and modules
         * are stored in 255-character columns, so those limits cannot be raised above 255.
         *
         * @param limits the limits, {@link MessageLimits#DEFAULTS} by default
         * @return this builder
         * @throws IllegalArgumentException if {@code limits} is null or a length limit exceeds its
         *     column
         */
        public Builder limits(MessageLimits limits) {
            if (limits == null) {
                throw new IllegalArgumentException("limits must not be null");
            }
            checkColumn("maxIdLength", limits.maxIdLength(), "id");
            checkColumn("maxTopicLength", limits.maxTopicLength(), "topic");
            checkColumn("maxKeyLength", limits.maxKeyLength(), "msg_key");
            checkColumn("maxModuleLength", limits.maxModuleLength(), "module");
            this.limits = limits;
            return this;
        }

        private static void checkColumn(String field, int value, String column) {
            if (value > StoredRow.COLUMN_LENGTH) {
                throw new IllegalArgumentException(
                        "limits."
                                + field
                                + " must be <= "
                                + StoredRow.COLUMN_LENGTH
                                + " (the "
                                + column
                                + " column holds "
                                + StoredRow.COLUMN_LENGTH
                                + " characters), but was "
                                + value);
            }
        }

        /**
         * Sets the clock that stamps the enqueue time of each message (a message without {@code
         * notBefore} is available from then). Every lease decision uses the relay's {@link
         * ClaimRequest#now()} instead.
         *
         * @param clock the clock, {@link Clock#systemUTC()} by default
         * @return this builder
         * @throws IllegalArgumentException if {@code clock} is null
         */
        public Builder clock(Clock clock) {
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null");
            }
            this.clock = clock;
            return this;
        }

        /**
         * Sets whether a dead letter holds back the later messages of its key until it is replayed
         * or discarded (the default), or stops counting as an earlier message of its key. Every
         * store over one table must be built with the same value.
         *
         * @param block {@code true} (the default) to keep a key blocked behind its dead letter
         * @return this builder
         */
        public Builder deadLettersBlockTheirKey(boolean block) {
            this.deadLettersBlockTheirKey = block;
            return this;
        }

        /**
         * Sets whether enqueue accepts a handle or connection in auto-commit mode. Refused by
         * default: such a message commits on its own, apart from the business change this library
         * exists to keep it with.
         *
         * @param allow {@code true} to accept it (each call then commits by itself)
         * @return this builder
         */
        public Builder allowEnqueueOutsideTransaction(boolean allow) {
            this.enqueueOutsideTransaction = allow;
            return this;
        }

        /**
         * Sets whether enqueues on PostgreSQL wake relays in other processes (docs/relay.md,
         * cross-process wake-up): after the commits it sees, the store sends one coalesced {@code
         * pg_notify} on a connection of its own from the {@link Jdbi}, at most one every 10 ms. On
         * by default; turn it off when no relay listens elsewhere, or the pool has no connection to
         * spare for it. Relays listen whatever this says. No effect on other databases.
         *
         * @param signal {@code true} (the default) to signal commits
         * @return this builder
         */
        public Builder signalCommits(boolean signal) {
            this.signalCommits = signal;
            return this;
        }

        /**
         * Builds the store. Without a configured dialect, opens one handle to read the database
         * product.
         *
         * @return the store
         * @throws IllegalArgumentException if the dialect was not given and the database is not
         *     supported
         * @throws OutboxException if the dialect must be detected and no connection can be had
         */
        public JdbiOutboxStore build() {
            return new JdbiOutboxStore(this, dialect != null ? dialect : detect(jdbi));
        }

        private static Dialect detect(Jdbi jdbi) {
            String[] product;
            try {
                product =
                        jdbi.withHandle(
                                h -> {
                                    DatabaseMetaData md = h.getConnection().getMetaData();
                                    return new String[] {
                                        md.getDatabaseProductName(), md.getDatabaseProductVersion()
                                    };
                                });
            } catch (SQLException | JdbiException e) {
                throw new OutboxException(
                        "cannot detect the database dialect: "
                                + e.getMessage()
                                + "; set it with JdbiOutboxStore.builder(jdbi).dialect(...)",
                        e);
            }
            String name = String.valueOf(product[0]).toLowerCase(Locale.ROOT);
            String version = String.valueOf(product[1]).toLowerCase(Locale.ROOT);
            if (name.contains("postgresql")) {
                return Dialect.POSTGRESQL;
            }
            if (name.contains("mariadb")
                    || (name.contains("mysql") && version.contains("mariadb"))) {
                return Dialect.MARIADB;
            }
            if (name.contains("mysql")) {
                return Dialect.MYSQL;
            }
            if (name.equals("h2")) {
                return Dialect.H2;
            }
            throw new IllegalArgumentException(
                    "database product '"
                            + product[0]
                            + "' is not supported; supported dialects are "
                            + Arrays.toString(Dialect.values())
                            + " (set one with dialect(...) if the database is compatible)");
        }
    }
}
