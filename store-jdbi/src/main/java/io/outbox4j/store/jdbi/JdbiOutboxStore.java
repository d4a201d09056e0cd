package io.outbox4j.store.jdbi;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.DuplicateMessageException;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.Outbox;
import io.outbox4j.api.OutboxException;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.argument.Argument;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.statement.Update;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;

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
 * <p>The write side ({@link Outbox}) inserts through the caller's own {@link Handle} or {@link
 * Connection} and never commits, rolls back or closes it; a batch is one JDBC batch (one round
 * trip). The dispatch side ({@link OutboxStore}) opens its own short-lived handles from the {@link
 * Jdbi}: a claim is one statement (PostgreSQL) or one short transaction (the others), never held
 * open while messages are published.
 *
 * <p>A message is claimable exactly when it is not dead and its {@code available_at} has come, by
 * the {@link ClaimRequest#now()} of the claimer: enqueue sets it to the message's {@code notBefore}
 * or the enqueue time (this JVM's clock), a claim moves it to the lease end, a release to the retry
 * time. Times are stored in UTC with microsecond precision. Dead-lettered rows stay in the table
 * with their reason, attempt count and time.
 *
 * <p>Instances are immutable and safe for use by any number of threads and processes at once.
 */
public final class JdbiOutboxStore implements OutboxStore, Outbox<Handle> {
    /** The table name used when none is configured. */
    public static final String DEFAULT_TABLE_NAME = "outbox_message";

    /**
     * Width of the {@code id}, {@code topic}, {@code msg_key} and {@code module} columns, in
     * characters.
     */
    private static final int COLUMN_LENGTH = 255;

    private static final int COMPLETE_CHUNK = 1000;
    private static final int TRIES = 3;
    private static final Instant MIN_TIME = Instant.parse("1000-01-01T00:00:00Z");
    private static final Instant MAX_TIME = Instant.parse("9999-12-31T23:59:59.999999Z");

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

    private static final int TOKEN_LENGTH = 36;

    /** The databases this store speaks to. */
    public enum Dialect {
        /** PostgreSQL 15 or later. */
        POSTGRESQL("postgresql.sql", '"'),
        /** MariaDB 10.6 or later. */
        MARIADB("mariadb.sql", '`'),
        /** MySQL 8.0 or later (same schema as MariaDB; completion runs as a short transaction). */
        MYSQL("mariadb.sql", '`'),
        /** H2 2.x. */
        H2("h2.sql", '"');

        private final String ddlFile;
        private final char quote;

        Dialect(String ddlFile, char quote) {
            this.ddlFile = ddlFile;
            this.quote = quote;
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
    }

    private final Jdbi jdbi;
    private final Dialect dialect;
    private final String tableName;
    private final MessageLimits limits;
    private final Sql sql;
    private final Clock clock;
    private final Outbox<Connection> jdbc = new JdbcOutbox();

    private JdbiOutboxStore(Builder b, Dialect dialect) {
        this.jdbi = b.jdbi;
        this.dialect = dialect;
        this.tableName = b.tableName;
        this.limits = b.limits;
        this.sql = new Sql(dialect, tableName);
        this.clock = Clock.systemUTC();
    }

    /**
     * Starts a store over a {@link Jdbi} (give it a pooled {@code DataSource} in production).
     *
     * @param jdbi where the dispatch side opens its handles
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
        return tableName;
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
     * Creates the table and its indexes unless they exist, from the dialect's DDL resource with the
     * configured table name. Run it once at startup, or run {@link Dialect#ddlResource()} as a
     * migration instead.
     *
     * @throws OutboxException if the database refuses the DDL
     */
    public void createSchemaIfAbsent() {
        List<String> statements = Schema.statements(dialect, tableName);
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
                            + quotedName()
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
     * @param transaction the caller's handle; neither committed nor closed here
     * @param message the message
     * @throws DuplicateMessageException if the id is already in the outbox; the caller's
     *     transaction stays usable and the caller decides whether to commit or roll it back
     * @throws IllegalArgumentException if the message breaks this store's limits
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
     * @param transaction the caller's handle; neither committed nor closed here
     * @param messages the messages, in order
     * @throws DuplicateMessageException if an id is already in the outbox or appears twice in the
     *     list; nothing of the batch is left inserted and the caller's transaction stays usable
     * @throws IllegalArgumentException if a message breaks this store's limits
     * @throws OutboxException if the table is missing or the insert fails otherwise
     */
    @Override
    public void enqueueAll(Handle transaction, List<Message> messages) {
        if (transaction == null) {
            throw new IllegalArgumentException("transaction must not be null");
        }
        insert(transaction.getConnection(), messages);
    }

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        Objects.requireNonNull(request, "request");
        // Stored times have microseconds. Every instant is rounded up to the next microsecond alike
        // (now, lease
        // end, retry time), so a message released until t is due at a claim at t, and never earlier
        // than the
        // microsecond before t.
        Instant now = clamp(ceilMicros(request.now()));
        Instant until = clamp(ceilMicros(request.leaseUntil()));
        String token = UUID.randomUUID().toString();
        List<Claimed> rows =
                dispatch(
                        "claim",
                        () -> {
                            switch (dialect) {
                                case POSTGRESQL:
                                    return statement(
                                            h ->
                                                    bindClaim(
                                                                    h.createQuery(sql.claim),
                                                                    until,
                                                                    request.owner(),
                                                                    token)
                                                            .bind(3, time(now))
                                                            .bind(4, request.limit())
                                                            .map((rs, ctx) -> claimed(rs, 0))
                                                            .list());
                                case H2:
                                    return jdbi.inTransaction(
                                            TransactionIsolationLevel.READ_COMMITTED,
                                            h -> claimOptimistic(h, request, now, until, token));
                                default:
                                    return jdbi.inTransaction(
                                            TransactionIsolationLevel.READ_COMMITTED,
                                            h -> claimLocked(h, request, now, until, token));
                            }
                        });
        rows.sort(
                Comparator.comparing((Claimed c) -> c.wasAvailableAt)
                        .thenComparingLong(c -> c.seq));
        List<Delivery> deliveries = new ArrayList<>(rows.size());
        for (Claimed c : rows) {
            String receipt = token + ':' + c.id;
            if (c.message != null) {
                deliveries.add(new Delivery(c.message, receipt, c.attempts));
            } else {
                // A row that is not a valid message (written by hand?) would block every claim:
                // park it.
                deadLetter(
                        new DeadLetter(
                                request.owner(),
                                receipt,
                                "stored row is not a valid message: " + c.unreadable,
                                request.now()));
            }
        }
        return deliveries;
    }

    private List<Claimed> claimLocked(
            Handle h, ClaimRequest request, Instant now, Instant until, String token) {
        List<Claimed> locked =
                h.createQuery(sql.claim)
                        .bind(0, time(now))
                        .bind(1, request.limit())
                        .map((rs, ctx) -> claimed(rs, 1))
                        .list();
        if (locked.isEmpty()) {
            return locked;
        }
        Update update =
                bindClaim(
                        h.createUpdate(sql.claimUpdate(locked.size())),
                        until,
                        request.owner(),
                        token);
        for (int i = 0; i < locked.size(); i++) {
            update.bind(3 + i, locked.get(i).id);
        }
        int moved = update.execute();
        if (moved != locked.size()) {
            throw new OutboxException(
                    "claim locked "
                            + locked.size()
                            + " rows of table "
                            + quotedName()
                            + " but moved "
                            + moved
                            + "; the transaction was rolled back");
        }
        return locked;
    }

    private List<Claimed> claimOptimistic(
            Handle h, ClaimRequest request, Instant now, Instant until, String token) {
        Map<String, Claimed> candidates = new LinkedHashMap<>();
        h.createQuery(sql.claim)
                .bind(0, time(now))
                .bind(1, request.limit())
                .map(
                        (rs, ctx) ->
                                new Claimed(
                                        rs.getString("id"),
                                        0,
                                        sql.getTime(rs, "was_available_at"),
                                        rs.getLong("seq")))
                .forEach(c -> candidates.put(c.id, c));
        if (candidates.isEmpty()) {
            return new ArrayList<>();
        }
        Query update =
                bindClaim(
                        h.createQuery(sql.claimUpdateReturning(candidates.size())),
                        until,
                        request.owner(),
                        token);
        int i = 3;
        for (String id : candidates.keySet()) {
            update.bind(i++, id);
        }
        update.bind(i, time(now));
        List<Claimed> moved =
                update.map((rs, ctx) -> claimed(rs, 0, candidates.get(rs.getString("id")))).list();
        return new ArrayList<>(moved);
    }

    private <S extends org.jdbi.v3.core.statement.SqlStatement<S>> S bindClaim(
            S statement, Instant until, String owner, String token) {
        return statement.bind(0, time(until)).bind(1, owner).bind(2, token);
    }

    @Override
    public Set<String> complete(Completion completion) {
        Objects.requireNonNull(completion, "completion");
        Set<String> stale = new LinkedHashSet<>();
        List<String> leases = new ArrayList<>();
        for (String receipt : new LinkedHashSet<>(completion.receipts())) {
            if (isReceipt(receipt)) {
                leases.add(receipt);
            } else {
                stale.add(receipt);
            }
        }
        if (sql.completesByClaim()) {
            completeByClaim(completion.owner(), leases, stale);
            return stale;
        }
        for (int from = 0; from < leases.size(); from += COMPLETE_CHUNK) {
            List<String> chunk =
                    leases.subList(from, Math.min(leases.size(), from + COMPLETE_CHUNK));
            Set<String> deleted =
                    dispatch(
                            "complete",
                            () ->
                                    sql.completesInOneStatement()
                                            ? statement(
                                                    h ->
                                                            deletedReceipts(
                                                                    bindLeases(
                                                                            h.createQuery(
                                                                                    sql.complete(
                                                                                            chunk
                                                                                                    .size())),
                                                                            completion.owner(),
                                                                            chunk)))
                                            : jdbi.inTransaction(
                                                    TransactionIsolationLevel.READ_COMMITTED,
                                                    h -> {
                                                        Set<String> locked =
                                                                deletedReceipts(
                                                                        bindLeases(
                                                                                h.createQuery(
                                                                                        sql
                                                                                                .lockLeases(
                                                                                                        chunk
                                                                                                                .size())),
                                                                                completion.owner(),
                                                                                chunk));
                                                        if (!locked.isEmpty()) {
                                                            Update delete =
                                                                    h.createUpdate(
                                                                            sql.deleteIds(
                                                                                    locked.size()));
                                                            int i = 0;
                                                            for (String receipt : locked) {
                                                                delete.bind(
                                                                        i++,
                                                                        receipt.substring(
                                                                                TOKEN_LENGTH + 1));
                                                            }
                                                            delete.execute();
                                                        }
                                                        return locked;
                                                    }));
            addStale(chunk, deleted, stale);
        }
        return stale;
    }

    /**
     * One statement per claim token (a relay's batch is one claim: one statement), ids bound as an
     * array.
     */
    private void completeByClaim(String owner, List<String> leases, Set<String> stale) {
        Map<String, List<String>> idsByToken = new LinkedHashMap<>();
        for (String receipt : leases) {
            idsByToken
                    .computeIfAbsent(receipt.substring(0, TOKEN_LENGTH), t -> new ArrayList<>())
                    .add(receipt.substring(TOKEN_LENGTH + 1));
        }
        // collected across a retried attempt, so rows deleted before a transient failure still
        // count
        Set<String> deleted = new HashSet<>();
        dispatch(
                "complete",
                () ->
                        statement(
                                h -> {
                                    idsByToken.forEach(
                                            (token, ids) ->
                                                    deleted.addAll(
                                                            deletedReceipts(
                                                                    h.createQuery(
                                                                                    sql
                                                                                            .completeOneClaim())
                                                                            .bind(0, owner)
                                                                            .bind(1, token)
                                                                            .bindArray(
                                                                                    2,
                                                                                    String.class,
                                                                                    ids))));
                                    return deleted;
                                }));
        addStale(leases, deleted, stale);
    }

    /** Every receipt that was asked for but not deleted is stale. */
    private static void addStale(List<String> asked, Set<String> deleted, Set<String> stale) {
        for (String receipt : asked) {
            if (!deleted.contains(receipt)) {
                stale.add(receipt);
            }
        }
    }

    private static Query bindLeases(Query query, String owner, List<String> receipts) {
        int n = receipts.size();
        query.bind(0, owner);
        for (int i = 0; i < n; i++) {
            String receipt = receipts.get(i);
            String id = receipt.substring(TOKEN_LENGTH + 1);
            query.bind(1 + i, id);
            query.bind(1 + n + 2 * i, id);
            query.bind(2 + n + 2 * i, receipt.substring(0, TOKEN_LENGTH));
        }
        return query;
    }

    private static Set<String> deletedReceipts(Query query) {
        return new HashSet<>(
                query.map((rs, ctx) -> rs.getString("receipt") + ':' + rs.getString("id")).list());
    }

    @Override
    public boolean release(Release release) {
        Objects.requireNonNull(release, "release");
        if (!isReceipt(release.receipt())) {
            return false;
        }
        Instant at = clamp(ceilMicros(release.availableAt()));
        String error = HeaderCodec.storableText(release.error());
        return dispatch(
                        "release",
                        () ->
                                statement(
                                        h ->
                                                bindLease(
                                                                h.createUpdate(sql.release)
                                                                        .bind(0, time(at))
                                                                        .bind(1, error),
                                                                release.owner(),
                                                                release.receipt())
                                                        .execute()))
                == 1;
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        Objects.requireNonNull(deadLetter, "deadLetter");
        if (!isReceipt(deadLetter.receipt())) {
            return false;
        }
        Instant at = clamp(deadLetter.at().truncatedTo(ChronoUnit.MICROS));
        String reason = HeaderCodec.storableText(deadLetter.reason());
        return dispatch(
                        "dead-letter",
                        () ->
                                statement(
                                        h ->
                                                bindLease(
                                                                h.createUpdate(sql.deadLetter)
                                                                        .bind(0, time(at))
                                                                        .bind(1, reason),
                                                                deadLetter.owner(),
                                                                deadLetter.receipt())
                                                        .execute()))
                == 1;
    }

    private static Update bindLease(Update update, String owner, String receipt) {
        return update.bind(2, receipt.substring(TOKEN_LENGTH + 1))
                .bind(3, receipt.substring(0, TOKEN_LENGTH))
                .bind(4, owner);
    }

    /** A receipt this store issued has the form {@code <36-character token>:<message id>}. */
    private static boolean isReceipt(String receipt) {
        return receipt.length() > TOKEN_LENGTH + 1 && receipt.charAt(TOKEN_LENGTH) == ':';
    }

    /** The statements of this store, for tests in this package. */
    Sql sql() {
        return sql;
    }

    @Override
    public String toString() {
        return "JdbiOutboxStore[dialect=" + dialect + ", table=" + tableName + "]";
    }

    // ---------------------------------------------------------------------------------------------- write side

    private void insert(Connection c, List<Message> messages) {
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
                throw new DuplicateMessageException(m.id(), null);
            }
        }
        if (messages.isEmpty()) {
            return;
        }
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        try {
            if (messages.size() == 1) {
                insertOne(c, messages.get(0), now);
            } else if (c.getAutoCommit()) {
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
                // The caller's transaction must stay usable after a failed batch (PostgreSQL would
                // abort it),
                // and nothing of the batch may stay inserted: a savepoint gives both.
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
        try (PreparedStatement st = c.prepareStatement(sql.insertOne)) {
            bind(st, m, now);
            if (st.executeUpdate() == 0) {
                // PostgreSQL: ON CONFLICT DO NOTHING kept the caller's transaction usable.
                throw new DuplicateMessageException(m.id(), null);
            }
        }
    }

    private void insertBatch(Connection c, List<Message> messages, Instant now)
            throws SQLException {
        try (PreparedStatement st = c.prepareStatement(sql.insert)) {
            for (Message m : messages) {
                bind(st, m, now);
                st.addBatch();
            }
            st.executeBatch();
        }
    }

    private void bind(PreparedStatement st, Message m, Instant now) throws SQLException {
        st.setString(1, m.id());
        st.setString(2, m.topic());
        st.setString(3, m.key().orElse(null));
        st.setString(4, m.module());
        st.setString(5, m.contentType());
        st.setBytes(6, m.payload());
        st.setString(7, HeaderCodec.encode(m.headers()));
        sql.setTime(st, 8, m.occurredAt());
        sql.setTime(st, 9, m.notBefore().orElse(null));
        sql.setTime(st, 10, m.notBefore().orElse(now));
    }

    private static void rollback(Connection c, Savepoint savepoint, Exception failure) {
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
            return new OutboxException(missingTable(), e);
        }
        return new OutboxException(
                "enqueue into table " + quotedName() + " failed: " + e.getMessage(), e);
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
        if (e instanceof BatchUpdateException) {
            int[] counts = ((BatchUpdateException) e).getUpdateCounts();
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
            throw new IllegalArgumentException(
                    "message '"
                            + m.id()
                            + "': payload is "
                            + m.payloadSize()
                            + " bytes, over the store's "
                            + limits.maxPayloadBytes()
                            + " limit");
        }
        if (m.headers().size() > limits.maxHeaders()) {
            throw new IllegalArgumentException(
                    "message '"
                            + m.id()
                            + "': headers has "
                            + m.headers().size()
                            + " entries, over the store's "
                            + limits.maxHeaders()
                            + " limit");
        }
        for (Map.Entry<String, String> h : m.headers().entrySet()) {
            if (h.getKey().length() > limits.maxHeaderNameLength()) {
                throw new IllegalArgumentException(
                        "message '"
                                + m.id()
                                + "': header name '"
                                + h.getKey()
                                + "' is over the store's "
                                + limits.maxHeaderNameLength()
                                + " character limit");
            }
            if (h.getValue().length() > limits.maxHeaderValueLength()) {
                throw new IllegalArgumentException(
                        "message '"
                                + m.id()
                                + "': header '"
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
            throw new IllegalArgumentException(
                    "message '"
                            + m.id()
                            + "': "
                            + field
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
            throw new IllegalArgumentException(
                    "message '"
                            + m.id()
                            + "': "
                            + field
                            + " has an unpaired surrogate"
                            + " at index "
                            + bad
                            + ", which a database text column cannot store");
        }
    }

    private static void checkTime(Message m, String field, Instant value) {
        if (value.isBefore(MIN_TIME) || value.isAfter(MAX_TIME)) {
            throw new IllegalArgumentException(
                    "message '"
                            + m.id()
                            + "': "
                            + field
                            + " must be between "
                            + MIN_TIME
                            + " and "
                            + MAX_TIME
                            + ", but was "
                            + value);
        }
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private static List<Message> listOf(Message message) {
        if (message == null) {
            throw new IllegalArgumentException("message must not be null");
        }
        return List.of(message);
    }

    private Claimed claimed(ResultSet rs, int attemptsAdded) throws SQLException {
        return claimed(
                rs,
                attemptsAdded,
                new Claimed(
                        rs.getString("id"),
                        0,
                        sql.getTime(rs, "was_available_at"),
                        rs.getLong("seq")));
    }

    /** Reads the message of a claimed row; its claim order comes from {@code order}. */
    private Claimed claimed(ResultSet rs, int attemptsAdded, Claimed order) throws SQLException {
        Claimed c =
                new Claimed(
                        order.id,
                        rs.getInt("attempts") + attemptsAdded,
                        order.wasAvailableAt,
                        order.seq);
        try {
            c.message =
                    Message.builder()
                            .limits(READ_LIMITS)
                            .id(c.id)
                            .topic(rs.getString("topic"))
                            .key(rs.getString("msg_key"))
                            .module(rs.getString("module"))
                            .contentType(rs.getString("content_type"))
                            .payload(rs.getBytes("payload"))
                            .headers(HeaderCodec.decode(rs.getString("headers")))
                            .occurredAt(sql.getTime(rs, "occurred_at"))
                            .notBefore(sql.getTime(rs, "not_before"))
                            .build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            c.unreadable = e.getMessage();
        }
        return c;
    }

    private Argument time(Instant value) {
        return (position, statement, ctx) -> sql.setTime(statement, position, value);
    }

    private static Instant ceilMicros(Instant t) {
        Instant floor = t.truncatedTo(ChronoUnit.MICROS);
        return floor.equals(t) ? t : floor.plusNanos(1000);
    }

    private static Instant clamp(Instant t) {
        return t.isBefore(MIN_TIME) ? MIN_TIME : t.isAfter(MAX_TIME) ? MAX_TIME : t;
    }

    /**
     * Runs a dispatch-side operation, again when the database aborted it for a deadlock or a
     * conflict.
     */
    private <T> T dispatch(String operation, Supplier<T> work) {
        for (int attempt = 1; ; attempt++) {
            try {
                return work.get();
            } catch (JdbiException e) {
                if (attempt < TRIES && SqlErrors.transientConflict(e)) {
                    continue;
                }
                if (SqlErrors.missingTable(e)) {
                    throw new OutboxException(missingTable(), e);
                }
                throw new OutboxException(
                        operation + " on table " + quotedName() + " failed: " + e.getMessage(), e);
            }
        }
    }

    /**
     * Runs one statement on a handle of its own: as it is on an auto-commit connection (the JDBC
     * default), in a transaction that commits when the pool hands out connections with auto-commit
     * off.
     */
    private <T> T statement(HandleCallback<T, RuntimeException> work) {
        return jdbi.withHandle(h -> isAutoCommit(h) ? work.withHandle(h) : h.inTransaction(work));
    }

    private static boolean isAutoCommit(Handle h) {
        try {
            return h.getConnection().getAutoCommit();
        } catch (SQLException e) {
            throw new org.jdbi.v3.core.ConnectionException(e);
        }
    }

    private String missingTable() {
        String rename =
                tableName.equals(DEFAULT_TABLE_NAME)
                        ? ""
                        : " (with " + DEFAULT_TABLE_NAME + " renamed to " + tableName + ")";
        return "table "
                + quotedName()
                + " does not exist; create it with "
                + dialect.ddlResource()
                + rename
                + " or call createSchemaIfAbsent()";
    }

    private String quotedName() {
        return '"' + tableName + '"';
    }

    /** One claimed row: the message (or why it could not be read) and its claim order. */
    private static final class Claimed {
        final String id;
        final int attempts;
        final Instant wasAvailableAt;
        final long seq;
        Message message;
        String unreadable;

        Claimed(String id, int attempts, Instant wasAvailableAt, long seq) {
            this.id = id;
            this.attempts = attempts;
            this.wasAvailableAt = wasAvailableAt;
            this.seq = seq;
        }
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
            insert(transaction, messages);
        }

        @Override
        public String toString() {
            return JdbiOutboxStore.this + ".jdbc()";
        }
    }

    /** Configures a {@link JdbiOutboxStore}; every setter validates its argument at once. */
    public static final class Builder {
        private final Jdbi jdbi;
        private Dialect dialect;
        private String tableName = DEFAULT_TABLE_NAME;
        private MessageLimits limits = MessageLimits.DEFAULTS;

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
         * Sets the table name; it is quoted in every statement, so it is case-sensitive.
         *
         * @param tableName a plain identifier of at most 63 characters, by default {@value
         *     JdbiOutboxStore#DEFAULT_TABLE_NAME}
         * @return this builder
         * @throws IllegalArgumentException if the name does not match {@code
         *     [A-Za-z_][A-Za-z0-9_]{0,62}}
         */
        public Builder tableName(String tableName) {
            if (tableName == null || !Sql.TABLE_NAME.matcher(tableName).matches()) {
                throw new IllegalArgumentException(
                        "tableName must match "
                                + Sql.TABLE_NAME.pattern()
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
            if (value > COLUMN_LENGTH) {
                throw new IllegalArgumentException(
                        "limits."
                                + field
                                + " must be <= "
                                + COLUMN_LENGTH
                                + " (the "
                                + column
                                + " column holds "
                                + COLUMN_LENGTH
                                + " characters), but was "
                                + value);
            }
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
            if (name.contains("mariadb") || name.contains("mysql") && version.contains("mariadb")) {
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
                            + "' is not supported; supported "
                            + "dialects are "
                            + java.util.Arrays.toString(Dialect.values())
                            + " (set one with dialect(...) if the database is compatible)");
        }
    }
}
