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
 * The store kit on one database: a subclass names the database. The stores use two connection pools
 * over the same table, like two application instances; a third store over the same table is built
 * with {@code deadLettersBlockTheirKey(false)}.
 */
abstract class JdbiStoreContractTest extends OutboxStoreContract {
    private static final Map<Class<?>, Setup> SETUPS = new ConcurrentHashMap<>();

    /** Returns a new {@code Jdbi} (with its own pool) over the database under test. */
    abstract Jdbi newJdbi();

    /** The dialect to force, or null to let the store detect it. */
    JdbiOutboxStore.Dialect dialect() {
        return null;
    }

    String table() {
        return "outbox_tck";
    }

    private JdbiOutboxStore.Builder builder(Jdbi jdbi) {
        JdbiOutboxStore.Builder b = JdbiOutboxStore.builder(jdbi).tableName(table());
        return dialect() == null ? b : b.dialect(dialect());
    }

    private record Setup(
            Jdbi jdbi, JdbiOutboxStore first, JdbiOutboxStore second, JdbiOutboxStore skipping) {}

    private Setup setup() {
        return SETUPS.computeIfAbsent(
                getClass(),
                k -> {
                    Jdbi jdbi = newJdbi();
                    JdbiOutboxStore first = builder(jdbi).build();
                    first.createSchemaIfAbsent();
                    return new Setup(
                            jdbi,
                            first,
                            builder(newJdbi()).build(),
                            builder(jdbi).deadLettersBlockTheirKey(false).build());
                });
    }

    private Jdbi jdbi() {
        return setup().jdbi();
    }

    private JdbiOutboxStore first() {
        return setup().first();
    }

    @Override
    protected OutboxStore store() {
        return first();
    }

    @Override
    protected OutboxStore secondStore() {
        return setup().second();
    }

    @Override
    protected Optional<OutboxStore> storeWhereDeadLettersDoNotBlock() {
        return Optional.of(setup().skipping());
    }

    @Override
    protected void resetStore() {
        jdbi().useHandle(h -> h.execute(first().sql().deleteAll));
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        jdbi().useTransaction(h -> first().enqueueAll(h, messages));
    }

    @Override
    protected void enqueueOneCommitted(Message message) {
        jdbi().useTransaction(h -> first().enqueue(h, message));
    }

    @Override
    protected void enqueueRolledBack(List<Message> messages) {
        jdbi().useHandle(
                        h -> {
                            h.begin();
                            first().enqueueAll(h, messages);
                            h.rollback();
                        });
    }

    @Override
    protected void enqueueCommittingDespiteFailure(List<Message> messages) {
        RuntimeException[] failure = new RuntimeException[1];
        try {
            jdbi().useTransaction(
                            h -> {
                                try {
                                    first().enqueueAll(h, messages);
                                } catch (RuntimeException e) {
                                    failure[0] = e;
                                }
                            });
        } catch (RuntimeException commitFailed) {
            if (failure[0] == null) {
                throw commitFailed;
            }
            failure[0].addSuppressed(commitFailed);
        }
        if (failure[0] != null) {
            throw failure[0];
        }
    }
}
