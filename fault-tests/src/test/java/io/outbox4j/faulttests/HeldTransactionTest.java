package io.outbox4j.faulttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Message;
import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.MariaDbServer;
import io.outbox4j.testservices.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: an application transaction enqueues messages and stays open (by default 8 s; {@code
 * -Doutbox4j.faults.holdSeconds=30} holds it half a minute) while other transactions enqueue and
 * commit (about 360 messages a second) for as long as it is held, and a relay runs. The held
 * transaction never delays the others: they are all published while it is open, at a low
 * commit-to-publish latency. Its own messages are published once it commits, and never when it
 * rolls back.
 *
 * <p>Every transaction of the application runs at its database's default isolation: READ COMMITTED
 * on PostgreSQL, REPEATABLE READ on MariaDB (issue 27: there, the relay's claim used to turn the
 * held transaction's row locks explicit, InnoDB handed them on to gaps, and other writers waited
 * for the held transaction). {@code -Doutbox4j.faults.isolation=READ_COMMITTED} runs MariaDB's at
 * READ COMMITTED instead.
 *
 * <p>The held messages have keys of their own (every message of {@code key-0}); messages of one key
 * written by concurrent transactions are published in the order their transactions make them
 * visible, which the application orders with its own locks.
 */
class HeldTransactionTest {
    private static final int KEYS = 50;
    private static final Duration HOLD =
            Duration.ofSeconds(Integer.getInteger("outbox4j.faults.holdSeconds", 8));

    /**
     * Enough messages for the others to write (about 360 a second) until 3 s before the held
     * transaction ends (2 000 for the default 8 s), a multiple of {@link #KEYS}.
     */
    private static final int MESSAGES =
            Math.max(2000, (int) (HOLD.toSeconds() - 3) * 360 / KEYS * KEYS);

    /** MariaDB's and MySQL's default, unless {@code outbox4j.faults.isolation} names another. */
    private static final TransactionIsolationLevel MARIADB_ISOLATION =
            TransactionIsolationLevel.valueOf(
                    System.getProperty("outbox4j.faults.isolation", "REPEATABLE_READ"));

    @Test
    void postgresql_aHeldTransactionBlocksNoOne_andItsMessagesArePublishedWhenItCommits()
            throws Exception {
        held("postgresql", PostgresServer.shared(), true, TransactionIsolationLevel.READ_COMMITTED);
    }

    @Test
    void postgresql_theMessagesOfARolledBackHeldTransactionAreNeverPublished() throws Exception {
        held(
                "postgresql",
                PostgresServer.shared(),
                false,
                TransactionIsolationLevel.READ_COMMITTED);
    }

    @Test
    void mariadb_aHeldTransactionBlocksNoOne_andItsMessagesArePublishedWhenItCommits()
            throws Exception {
        held("mariadb", MariaDbServer.shared(), true, MARIADB_ISOLATION);
    }

    private static void held(
            String database,
            DatabaseServer server,
            boolean commit,
            TransactionIsolationLevel isolation)
            throws Exception {
        String scenario = database + "_held_transaction_" + (commit ? "commit" : "rollback");
        try (Drill d =
                new Drill(
                        scenario, MESSAGES, KEYS, RelaySettings.drill(), server, KafkaSink::open)) {
            List<Integer> heldSeqs = new ArrayList<>();
            List<Message> heldMessages = new ArrayList<>();
            List<Message> others = new ArrayList<>();
            for (int seq = 0; seq < MESSAGES; seq++) {
                if (seq % KEYS == 0) {
                    heldSeqs.add(seq);
                    heldMessages.add(d.load.message(seq));
                } else {
                    others.add(d.load.message(seq));
                }
            }
            Handle held = d.db.jdbi().open();
            try {
                held.setTransactionIsolationLevel(isolation);
                held.begin();
                d.db.store().enqueueAll(held, heldMessages);
                long openedAt = System.currentTimeMillis();

                Drill.LocalRelay relay = d.localRelay("relay-1");
                relay.relay().start();
                // the others: committed in transactions of 20, about 400 messages a second, at the
                // same isolation
                long[] committedAt = new long[MESSAGES];
                for (int from = 0; from < others.size(); from += 20) {
                    List<Message> chunk = others.subList(from, Math.min(others.size(), from + 20));
                    d.db.jdbi().useTransaction(isolation, h -> d.db.store().enqueueAll(h, chunk));
                    long now = System.currentTimeMillis();
                    chunk.forEach(m -> committedAt[d.load.seqOf(m.id())] = now);
                    Thread.sleep(50);
                }
                // every other message is published while the transaction is still open (this
                // throws naming the count when they are not, e.g. when claims wait for its rows)
                Drill.awaitPublished(d, others.size(), Duration.ofSeconds(60));
                assertThat(d.ledger.countWithRecord(heldSeqs, (at, by) -> true))
                        .as("messages of the open transaction published")
                        .isZero();

                List<Long> latencies = new ArrayList<>();
                for (Message m : others) {
                    int seq = d.load.seqOf(m.id());
                    OptionalLong first = d.ledger.firstPublishAt(0, List.of(seq), by -> true);
                    latencies.add(first.getAsLong() - committedAt[seq]);
                }
                latencies.sort(null);
                Thread.sleep(Math.max(0, openedAt + HOLD.toMillis() - System.currentTimeMillis()));
                long heldMillis = System.currentTimeMillis() - openedAt;
                long endedAt = System.currentTimeMillis();
                if (commit) {
                    held.commit();
                } else {
                    held.rollback();
                }
                Map<String, Object> extra = new LinkedHashMap<>();
                extra.put("isolation", isolation.name());
                extra.put("heldMillis", heldMillis);
                extra.put("heldMessages", heldSeqs.size());
                extra.put("heldEndedBy", commit ? "commit" : "rollback");
                extra.put("othersPublishedWhileHeld", others.size());
                extra.put("othersCommitToPublishP50Millis", percentile(latencies, 50));
                extra.put("othersCommitToPublishP99Millis", percentile(latencies, 99));
                extra.put("othersCommitToPublishMaxMillis", latencies.get(latencies.size() - 1));
                if (commit) {
                    boolean drained = d.awaitDrained(Duration.ofSeconds(60));
                    OptionalLong heldFirst = d.ledger.firstPublishAt(endedAt, heldSeqs, by -> true);
                    extra.put("drainedInTime", drained);
                    extra.put(
                            "heldFirstPublishedAfterCommitMillis",
                            heldFirst.isPresent() ? heldFirst.getAsLong() - endedAt : null);
                    d.report(extra);
                    d.verify();
                } else {
                    Thread.sleep(2_000); // time for a wrongly visible message to be published
                    d.report(extra);
                    assertThat(d.ledger.missing(MESSAGES))
                            .as("the messages never published: exactly the rolled-back ones")
                            .containsExactlyElementsOf(heldSeqs);
                    assertThat(d.ledger.keysOutOfOrder()).isZero();
                    assertThat(d.db.unfinished()).as("messages left in the outbox").isZero();
                    assertThat(d.db.deadLetters()).isZero();
                }
                assertThat(percentile(latencies, 99))
                        .as(
                                "commit-to-publish p99 of the others while a transaction was held"
                                        + " (ms)")
                        .isLessThan(2_000);
            } finally {
                if (held.isInTransaction()) {
                    held.rollback(); // so that closing does not hide what failed
                }
                held.close();
            }
        }
    }

    private static long percentile(List<Long> sorted, int p) {
        return sorted.get(Math.min(sorted.size() - 1, sorted.size() * p / 100));
    }
}
