package io.outbox4j.faulttests;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Message;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.PostgresServer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jdbi.v3.core.Jdbi;

/**
 * A fresh database (on the shared PostgreSQL test server unless another server is given) holding
 * one outbox table, behind a small connection pool, with the {@link JdbiOutboxStore} over it.
 * Relays in child JVMs open their own pools to the same database ({@link #jdbcUrl()}, {@link
 * #user()}, {@link #password()}).
 */
public final class OutboxDatabase implements AutoCloseable {
    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final HikariDataSource dataSource;
    private final Jdbi jdbi;
    private final JdbiOutboxStore store;

    private OutboxDatabase(String jdbcUrl, String user, String password, int poolSize) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.dataSource = pool(jdbcUrl, user, password, poolSize, "outbox4j-fault-" + poolSize);
        this.jdbi = Jdbi.create(dataSource);
        this.store = JdbiOutboxStore.builder(jdbi).build();
    }

    /**
     * Creates (or re-creates, empty) a database on the shared PostgreSQL server with the outbox
     * table in it.
     *
     * @param name the database name: lower-case letters, digits, underscores
     * @param poolSize the connections of this JVM's pool
     * @return the database; close it to close the pool
     */
    public static OutboxDatabase create(String name, int poolSize) {
        return create(PostgresServer.shared(), name, poolSize);
    }

    /**
     * Creates (or re-creates, empty) a database on a test server (PostgreSQL or MariaDB) with the
     * outbox table in it.
     *
     * @param server the server
     * @param name the database name: lower-case letters, digits, underscores
     * @param poolSize the connections of this JVM's pool
     * @return the database; close it to close the pool
     */
    public static OutboxDatabase create(DatabaseServer server, String name, int poolSize) {
        OutboxDatabase db =
                new OutboxDatabase(
                        server.createDatabase(name), server.user(), server.password(), poolSize);
        db.store.createSchemaIfAbsent();
        return db;
    }

    /**
     * Opens a pool to an existing outbox database (what a relay in a child JVM does).
     *
     * @return a pool; the caller closes it
     */
    static HikariDataSource pool(
            String jdbcUrl, String user, String password, int poolSize, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(1);
        config.setPoolName(name);
        config.setConnectionTimeout(10_000);
        return new HikariDataSource(config);
    }

    /** The JDBC URL of this database. */
    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** The database user. */
    public String user() {
        return user;
    }

    /** The database password, possibly empty. */
    public String password() {
        return password;
    }

    /** The store over this database (this JVM's pool). */
    public JdbiOutboxStore store() {
        return store;
    }

    /** The Jdbi over this JVM's pool. */
    public Jdbi jdbi() {
        return jdbi;
    }

    /**
     * Enqueues messages in order, in committed transactions of up to 500, one after the other (so
     * the store's enqueue order is the list order).
     *
     * @param messages the messages
     */
    public void enqueue(List<Message> messages) {
        for (int from = 0; from < messages.size(); from += 500) {
            List<Message> chunk = messages.subList(from, Math.min(messages.size(), from + 500));
            jdbi.useTransaction(h -> store.enqueueAll(h, chunk));
        }
    }

    /**
     * Counts the messages still in the outbox and not dead-lettered (pending, leased or waiting for
     * a retry).
     *
     * @return the count
     */
    public int unfinished() {
        return count("dead_at IS NULL");
    }

    /**
     * Counts the dead-lettered messages.
     *
     * @return the count
     */
    public int deadLetters() {
        return count("dead_at IS NOT NULL");
    }

    /**
     * Returns the reasons of up to {@code limit} dead letters, for a failure message.
     *
     * @param limit how many at most
     * @return {@code id: reason} lines
     */
    public List<String> deadLetterReasons(int limit) {
        return jdbi.withHandle(
                h ->
                        h.createQuery(
                                        "SELECT id, dead_reason FROM "
                                                + store.tableName()
                                                + " WHERE dead_at IS NOT NULL ORDER BY id LIMIT "
                                                + limit)
                                .map((rs, ctx) -> rs.getString(1) + ": " + rs.getString(2))
                                .list());
    }

    /**
     * Reads who owns each bucket now (docs/scale-out.md: the table {@code <table>_buckets}, written
     * by the members' renewals), for a drill that needs the owners at the moment of a fault.
     *
     * @return bucket → owning member; buckets without an owner are absent
     */
    public Map<Integer, String> bucketOwners() {
        Map<Integer, String> owners = new TreeMap<>();
        jdbi.useHandle(
                h ->
                        h.createQuery(
                                        "SELECT bucket, owner FROM "
                                                + store.tableName()
                                                + "_buckets"
                                                + " WHERE owner IS NOT NULL")
                                .map((rs, ctx) -> owners.put(rs.getInt(1), rs.getString(2)))
                                .list());
        return owners;
    }

    /**
     * Returns the keys that have at least one message still in the outbox (pending, leased, parked
     * or waiting for a retry; not dead-lettered).
     *
     * @return the keys
     */
    public Set<String> keysWithUnfinished() {
        List<String> keys =
                jdbi.withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT DISTINCT msg_key FROM "
                                                        + store.tableName()
                                                        + " WHERE dead_at IS NULL"
                                                        + " AND msg_key IS NOT NULL")
                                        .mapTo(String.class)
                                        .list());
        return new TreeSet<>(keys);
    }

    private int count(String where) {
        return jdbi.withHandle(
                h ->
                        h.createQuery(
                                        "SELECT count(*) FROM "
                                                + store.tableName()
                                                + " WHERE "
                                                + where)
                                .mapTo(Integer.class)
                                .one());
    }

    /** Closes this JVM's pool (the database stays). */
    @Override
    public void close() {
        dataSource.close();
    }
}
