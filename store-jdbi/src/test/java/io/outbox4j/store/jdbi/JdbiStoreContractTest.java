package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.OutboxStoreContract;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Jdbi;

/**
 * The TCK on one database: a subclass names the database; the two stores use two connection pools
 * over the same table, like two application instances.
 */
abstract class JdbiStoreContractTest extends OutboxStoreContract {
    private static final Map<Class<?>, Setup> SETUPS = new ConcurrentHashMap<>();

    /** Returns a new {@code Jdbi} (with its own pool) over the database under test. */
    abstract Jdbi newJdbi();

    /** The dialect to force, or null to let the store detect it. */
    JdbiOutboxStore.Dialect dialect() {
        return null;
    }

    private JdbiOutboxStore newStore(Jdbi jdbi) {
        JdbiOutboxStore.Builder b = JdbiOutboxStore.builder(jdbi).tableName(table());
        return (dialect() == null ? b : b.dialect(dialect())).build();
    }

    String table() {
        return "outbox_tck";
    }

    private record Setup(Jdbi jdbi, JdbiOutboxStore first, JdbiOutboxStore second) {}

    private Setup setup() {
        return SETUPS.computeIfAbsent(
                getClass(),
                k -> {
                    Jdbi jdbi = newJdbi();
                    JdbiOutboxStore first = newStore(jdbi);
                    first.createSchemaIfAbsent();
                    return new Setup(jdbi, first, newStore(newJdbi()));
                });
    }

    private Jdbi jdbi() {
        return setup().jdbi();
    }

    private JdbiOutboxStore[] stores() {
        return new JdbiOutboxStore[] {setup().first(), setup().second()};
    }

    @Override
    protected OutboxStore store() {
        return stores()[0];
    }

    @Override
    protected OutboxStore secondStore() {
        return stores()[1];
    }

    @Override
    protected void resetStore() {
        jdbi().useHandle(h -> h.execute(stores()[0].sql().deleteAll()));
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        jdbi().useTransaction(h -> stores()[0].enqueueAll(h, messages));
    }

    @Override
    protected void enqueueRolledBack(List<Message> messages) {
        jdbi().useHandle(
                        h -> {
                            h.begin();
                            stores()[0].enqueueAll(h, messages);
                            h.rollback();
                        });
    }

    @Override
    protected Optional<String> deadLetterReason(String messageId) {
        return jdbi().withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT dead_reason FROM "
                                                        + stores()[0].sql().table
                                                        + " WHERE id = ? AND dead_at IS NOT NULL")
                                        .bind(0, messageId)
                                        .mapTo(String.class)
                                        .findOne());
    }
}
