package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import io.outbox4j.testservices.MariaDbServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 27 (item 6), found by the held-transaction drill in fault-tests: on MariaDB at REPEATABLE
 * READ, an application transaction that enqueued and stayed open made other enqueuing transactions
 * wait. The claim's {@code FOR UPDATE SKIP LOCKED} scan reached the open transaction's rows and, in
 * skipping them, turned its implicit locks on them into explicit ones; InnoDB hands explicit locks
 * of a REPEATABLE READ transaction on to neighbouring gaps when pages split or merge or neighbours
 * are purged, and other writers' inserts into those gaps waited for the open transaction.
 *
 * <p>The rule this checks: whatever the relay does (claim as a member or of every bucket, complete
 * keyed and unkeyed, release, extend, abandon, dead-letter), no lock of the open transaction ever
 * becomes explicit, so it has none to hand on; no statement of the relay waits for it, also when
 * the outbox is nearly empty and one statement names most of its rows (where an {@code id IN (…)}
 * list made the optimizer scan the primary key, locking rows the list did not name); and other
 * REPEATABLE READ transactions enqueue and commit beside it without waiting.
 */
class MariaDbRepeatableReadTest {
    private static final Duration LEASE = Duration.ofMinutes(5);
    private static Jdbi jdbi;
    private static JdbiOutboxStore store;

    /**
     * Every connection waits at most 2 s for a row lock (InnoDB's default is 50 s), so a statement
     * that waits for the open transaction fails the test at once.
     */
    @BeforeAll
    static void createTheTable() {
        MariaDbServer server = MariaDbServer.shared();
        String url = Databases.mariaDbUrl();
        jdbi =
                Jdbi.create(
                        new Databases.Pool(
                                url
                                        + (url.contains("?") ? "&" : "?")
                                        + "sessionVariables=innodb_lock_wait_timeout=2",
                                server.user(),
                                server.password()));
        store = JdbiOutboxStore.builder(jdbi).tableName("outbox_repeatable_read").build();
        store.createSchemaIfAbsent();
        jdbi.useHandle(h -> h.execute("DELETE FROM outbox_repeatable_read"));
    }

    private static List<Message> messages(String prefix, int n) {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            messages.add(
                    Message.builder()
                            .id(prefix + "-" + i)
                            .topic("orders.created")
                            .key(i % 3 == 0 ? null : "k" + (i % 7))
                            .module("orders")
                            .contentType("application/json")
                            .payload("{\"i\":" + i + "}")
                            .build());
        }
        return messages;
    }

    /** Row locks InnoDB keeps as explicit locks for the transaction of this handle's session. */
    private static long explicitRowLocks(Handle held) {
        long connection = held.createQuery("SELECT CONNECTION_ID()").mapTo(Long.class).one();
        return jdbi.withHandle(
                h ->
                        h.createQuery(
                                        "SELECT trx_rows_locked FROM information_schema.innodb_trx"
                                                + " WHERE trx_mysql_thread_id = :c")
                                .bind("c", connection)
                                .mapTo(Long.class)
                                .one());
    }

    private static Set<String> ids(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> d.message().id()).collect(Collectors.toSet());
    }

    @Test
    void aHeldRepeatableReadTransaction_keepsOnlyImplicitLocks_whateverTheRelayDoes() {
        jdbi.useTransaction(h -> store.enqueueAll(h, messages("before", 60)));
        try (Handle held = jdbi.open()) {
            held.setTransactionIsolationLevel(TransactionIsolationLevel.REPEATABLE_READ);
            held.begin();
            try {
                store.enqueueAll(held, messages("held", 40));

                store.renew("member", Duration.ofMinutes(1));
                Instant now = Instant.now().plusSeconds(1);
                List<Delivery> all = store.claim(new ClaimRequest("relay", now, LEASE, 20));
                List<Delivery> mine =
                        store.claim(new ClaimRequest("member", now, LEASE, 100, true));
                assertThat(all).hasSize(20);
                assertThat(mine).isNotEmpty();
                List<Delivery> claimed = new ArrayList<>(mine);
                claimed.addAll(all);
                assertThat(ids(claimed)).noneMatch(id -> id.startsWith("held"));
                assertThat(claimed).isNotEmpty();

                List<String> relayReceipts = all.stream().map(Delivery::receipt).toList();
                store.extend(new Extension("relay", relayReceipts, now.plus(LEASE)));
                int quarter = all.size() / 4;
                store.release(
                        new Release("relay", all.get(0).receipt(), now.minusSeconds(5), "retry"));
                store.deadLetter(
                        new io.outbox4j.api.DeadLetter(
                                "relay", all.get(1).receipt(), "poison", now));
                store.abandon(
                        new Abandonment(
                                "relay",
                                all.subList(2, 2 + quarter).stream()
                                        .map(Delivery::receipt)
                                        .toList()));
                store.complete(
                        new Completion(
                                "relay",
                                all.subList(2 + quarter, all.size()).stream()
                                        .map(Delivery::receipt)
                                        .toList()));
                store.complete(
                        new Completion("member", mine.stream().map(Delivery::receipt).toList()));
                // what was released and abandoned is claimed again, beside the open rows
                List<Delivery> again = store.claim(new ClaimRequest("relay", now, LEASE, 100));
                assertThat(ids(again)).noneMatch(id -> id.startsWith("held"));
                store.complete(
                        new Completion("relay", again.stream().map(Delivery::receipt).toList()));

                assertThat(explicitRowLocks(held))
                        .as(
                                "row locks of the open REPEATABLE READ transaction made explicit"
                                        + " by the relay (each one InnoDB may hand on to a gap)")
                        .isZero();

                // others at REPEATABLE READ enqueue and commit beside it without waiting
                for (int round = 0; round < 5; round++) {
                    List<Message> batch = messages("other" + round, 50);
                    jdbi.useTransaction(
                            TransactionIsolationLevel.REPEATABLE_READ,
                            h -> store.enqueueAll(h, batch));
                    List<Delivery> others =
                            store.claim(new ClaimRequest("relay", Instant.now(), LEASE, 100));
                    store.complete(
                            new Completion(
                                    "relay", others.stream().map(Delivery::receipt).toList()));
                }
                // the outbox is nearly empty now: one completion names most of its rows
                jdbi.useTransaction(h -> store.enqueueAll(h, messages("last", 60)));
                List<Delivery> last =
                        store.claim(new ClaimRequest("relay", Instant.now(), LEASE, 1000));
                assertThat(ids(last)).noneMatch(id -> id.startsWith("held")).isNotEmpty();
                store.complete(
                        new Completion("relay", last.stream().map(Delivery::receipt).toList()));
                assertThat(explicitRowLocks(held)).isZero();
                held.commit();
            } finally {
                if (held.isInTransaction()) {
                    held.rollback();
                }
            }
        }
        List<Delivery> heldMessages =
                store.claim(new ClaimRequest("relay", Instant.now(), LEASE, 1000));
        assertThat(ids(heldMessages)).anyMatch(id -> id.startsWith("held"));
    }
}
