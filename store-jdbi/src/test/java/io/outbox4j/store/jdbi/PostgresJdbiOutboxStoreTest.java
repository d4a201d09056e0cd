package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.store.jdbi.JdbiOutboxStore.Dialect;
import io.outbox4j.testservices.PostgresServer;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/** The store's own tests on PostgreSQL. */
class PostgresJdbiOutboxStoreTest extends JdbiOutboxStoreTest {
    PostgresJdbiOutboxStoreTest() {
        super(Databases::postgres, Dialect.POSTGRESQL);
    }

    /**
     * The claim lock only orders claims and removals when the statements after it see what was
     * committed before it was granted: a pool whose connections run at REPEATABLE READ must not
     * break per-key order. The store notices and asks for READ COMMITTED from then on.
     */
    @Test
    void connectionsAtRepeatableRead_areAskedForReadCommitted_andKeepKeyOrder() {
        PostgresServer server = PostgresServer.shared();
        Databases.Pool pool =
                new Databases.Pool(Databases.postgresUrl(), server.user(), server.password());
        Jdbi repeatableRead =
                Jdbi.create(
                        new ConnectionFactory() {
                            @Override
                            public Connection openConnection() throws java.sql.SQLException {
                                Connection c = pool.openConnection();
                                c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                                return c;
                            }

                            @Override
                            public void closeConnection(Connection c) throws java.sql.SQLException {
                                pool.closeConnection(c);
                            }
                        });
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(repeatableRead).tableName("outbox_repeatable").build();
        store.createSchemaIfAbsent();
        repeatableRead.useHandle(h -> h.execute(store.sql().deleteAll));
        List<Message> messages =
                List.of("1", "2", "3").stream()
                        .map(
                                n ->
                                        Message.builder()
                                                .id("rr-" + n)
                                                .topic("orders")
                                                .module("test")
                                                .key("one-key")
                                                .payload(n)
                                                .build())
                        .toList();
        repeatableRead.useTransaction(h -> store.enqueueAll(h, messages));
        Instant now = Instant.now().plusSeconds(1);
        List<Delivery> first = store.claim(new ClaimRequest("a", now, Duration.ofMinutes(5), 1));
        assertThat(first.stream().map(d -> d.message().id())).containsExactly("rr-1");
        assertThat(((PostgresDialect) store.sql()).asksForReadCommitted())
                .as("the store noticed REPEATABLE READ")
                .isTrue();
        assertThat(store.claim(new ClaimRequest("b", now, Duration.ofMinutes(5), 10)))
                .as("the key's later messages while its first is leased")
                .isEmpty();
        assertThat(store.complete(new Completion("a", List.of(first.get(0).receipt())))).isEmpty();
        List<Delivery> rest = store.claim(new ClaimRequest("b", now, Duration.ofMinutes(5), 10));
        assertThat(rest.stream().map(d -> d.message().id())).containsExactly("rr-2", "rr-3");
        assertThat(
                        store.complete(
                                new Completion("b", rest.stream().map(Delivery::receipt).toList())))
                .isEmpty();
    }
}
