package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.tck.OutboxWakeUpsContract;
import java.util.List;
import org.jdbi.v3.core.Jdbi;

/**
 * The tck's wake-up kit on PostgreSQL: the listening store and the writing store are two instances
 * with pools of their own, as a relay and an application in two processes.
 */
class PostgresWakeUpsContractTest extends OutboxWakeUpsContract {
    private static final String TABLE = "outbox_wakeups_kit";
    private static final Jdbi RELAY_JDBI = Databases.postgres();
    private static final Jdbi WRITER_JDBI = Databases.postgres();
    private static final JdbiOutboxStore RELAY =
            JdbiOutboxStore.builder(RELAY_JDBI).tableName(TABLE).build();
    private static final JdbiOutboxStore WRITER = writer();

    private static JdbiOutboxStore writer() {
        JdbiOutboxStore w = JdbiOutboxStore.builder(WRITER_JDBI).tableName(TABLE).build();
        w.createSchemaIfAbsent();
        return w;
    }

    @Override
    protected OutboxWakeUps wakeUps() {
        return RELAY;
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        WRITER_JDBI.useTransaction(h -> WRITER.enqueueAll(h, messages));
    }
}
