package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.store.jdbi.KitDatabase.KitStore;
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

    private final KitDatabase database;
    private final String table;

    /** The kit on {@code database}, in its table {@code outbox_tck}. */
    JdbiStoreContractTest(KitDatabase database) {
        this(database, "outbox_tck");
    }

    /** The kit on {@code database}, in {@code table}. */
    JdbiStoreContractTest(KitDatabase database, String table) {
        this.database = database;
        this.table = table;
    }

    private record Setup(KitStore first, JdbiOutboxStore second, JdbiOutboxStore skipping) {}

    private Setup setup() {
        return SETUPS.computeIfAbsent(
                getClass(),
                k -> {
                    KitStore first = database.createStore(table);
                    return new Setup(
                            first,
                            database.builder(database.newJdbi(), table).build(),
                            database.builder(first.jdbi(), table)
                                    .deadLettersBlockTheirKey(false)
                                    .build());
                });
    }

    private Jdbi jdbi() {
        return setup().first().jdbi();
    }

    private JdbiOutboxStore first() {
        return setup().first().store();
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
        setup().first().deleteAll();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        setup().first().enqueueCommitted(messages);
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
