package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxWakeUps.Listening;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Cross-process wake-ups on a real PostgreSQL (docs/relay.md): the writer and the listener are two
 * store instances, each with its own connection pool, as two processes would be.
 */
class PostgresWakeUpsTest {
    private static final String TABLE = "outbox_wakeups";
    private static final Duration BOUND = Duration.ofSeconds(1);
    private static final AtomicInteger IDS = new AtomicInteger();

    private final Jdbi writerJdbi = Databases.postgres();
    private final Jdbi relayJdbi = Databases.postgres();
    private final JdbiOutboxStore writer =
            JdbiOutboxStore.builder(writerJdbi).tableName(TABLE).build();
    private final JdbiOutboxStore relay =
            JdbiOutboxStore.builder(relayJdbi).tableName(TABLE).build();
    private final Semaphore wakeUps = new Semaphore(0);
    private Listening listening;

    @BeforeEach
    void listen() throws InterruptedException {
        writer.createSchemaIfAbsent();
        writerJdbi.useHandle(h -> h.execute(writer.sql().deleteAll));
        listening = relay.listen(wakeUps::release);
        // The listener wakes once as soon as it listens (what was committed before is claimable).
        assertThat(wakeUps.tryAcquire(10, TimeUnit.SECONDS)).as("listening").isTrue();
    }

    @AfterEach
    void stop() {
        listening.close();
    }

    @Test
    void commitOfAJdbiTransaction_wakesAListenerOfAnotherStoreInstance_andTheMessageIsClaimable()
            throws InterruptedException {
        Message m = message();
        writerJdbi.useTransaction(h -> writer.enqueue(h, m));

        assertWokenWithin(BOUND);
        assertThat(claimIds()).containsExactly(m.id());
    }

    @Test
    void commitThroughAPlainJdbcConnection_wakesTheListenerToo() throws Exception {
        Message m = message();
        try (Connection c =
                java.sql.DriverManager.getConnection(
                        Databases.postgresUrl(),
                        io.outbox4j.testservices.PostgresServer.shared().user(),
                        io.outbox4j.testservices.PostgresServer.shared().password())) {
            c.setAutoCommit(false);
            writer.jdbc().enqueue(c, m);
            c.commit();
        }
        assertWokenWithin(BOUND);
        assertThat(claimIds()).containsExactly(m.id());
    }

    @Test
    void manyCommits_areCoalesced_intoFewerWakeUps() throws InterruptedException {
        int commits = 200;
        for (int i = 0; i < commits; i++) {
            Message m = message();
            writerJdbi.useTransaction(h -> writer.enqueue(h, m));
        }
        assertWokenWithin(BOUND);
        assertThat(claimIds()).hasSize(commits);
        // Sends at least 1 ms apart, one in flight and one pending: far fewer wake-ups than
        // commits.
        assertThat(wakeUps.availablePermits() + 1).isLessThan(commits / 2);
    }

    @Test
    void listenerConnectionTerminated_reconnects_andACommitMadeMeanwhileIsNotLost()
            throws InterruptedException {
        int killed =
                writerJdbi.withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT count(pg_terminate_backend(pid)) FROM"
                                                        + " pg_stat_activity WHERE query LIKE"
                                                        + " 'LISTEN %"
                                                        + TABLE
                                                        + "%' AND pid <> pg_backend_pid()")
                                        .mapTo(Integer.class)
                                        .one());
        List<String> sessions =
                writerJdbi.withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT pid || ' ' || coalesce(state, '') || ' '"
                                                        + " || query FROM pg_stat_activity")
                                        .mapTo(String.class)
                                        .list());
        assertThat(killed).as("listener backends terminated; sessions: %s", sessions).isEqualTo(1);
        Message meanwhile = message();
        writerJdbi.useTransaction(h -> writer.enqueue(h, meanwhile));

        // Woken by the commit, or by the listener listening again: either way within the bound.
        assertWokenWithin(Duration.ofSeconds(5));
        assertThat(claimIds()).containsExactly(meanwhile.id());

        // And it listens again: the next commit wakes it.
        awaitListening();
        wakeUps.drainPermits();
        Message next = message();
        writerJdbi.useTransaction(h -> writer.enqueue(h, next));
        assertWokenWithin(BOUND);
        assertThat(claimIds()).containsExactly(next.id());
    }

    @Test
    void listen_refusesNull() {
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> relay.listen(null))
                .withMessage("wakeUp must not be null");
    }

    @Test
    void channel_isPerTable_andFitsPostgresIdentifiers() {
        assertThat(PgWakeUps.channel("outbox_message")).isEqualTo("outbox4j:outbox_message");
        assertThat(PgWakeUps.channel("t".repeat(63))).hasSize(63).startsWith("outbox4j:ttt");
    }

    private void awaitListening() throws InterruptedException {
        Awaitility.await("the listener listens again")
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(10))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(20))
                .until(
                        () ->
                                writerJdbi.withHandle(
                                                h ->
                                                        h.createQuery(
                                                                        "SELECT count(*) FROM"
                                                                                + " pg_stat_activity WHERE"
                                                                                + " query LIKE 'LISTEN %"
                                                                                + TABLE
                                                                                + "%'")
                                                                .mapTo(Integer.class)
                                                                .one())
                                        == 1);
    }

    private void assertWokenWithin(Duration bound) throws InterruptedException {
        assertThat(wakeUps.tryAcquire(bound.toMillis(), TimeUnit.MILLISECONDS))
                .as("woken within %s", bound)
                .isTrue();
    }

    private List<String> claimIds() {
        return relay
                .claim(
                        new ClaimRequest(
                                "relay",
                                Instant.now().plusSeconds(1),
                                Duration.ofSeconds(30),
                                1000))
                .stream()
                .map(d -> d.message().id())
                .collect(Collectors.toList());
    }

    private static Message message() {
        return Message.builder()
                .id("w-" + IDS.incrementAndGet() + "-" + System.nanoTime())
                .topic("orders.created")
                .module("orders")
                .payload("{}")
                .contentType("application/json")
                .build();
    }
}
