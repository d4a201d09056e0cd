package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.tck.OutboxMembershipContract;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Jdbi;

/**
 * The membership kit on one database: a subclass names the database. The two stores use two
 * connection pools over the same table, like two relays.
 */
abstract class JdbiMembershipContractTest extends OutboxMembershipContract {
    private static final Map<Class<?>, Setup> SETUPS = new ConcurrentHashMap<>();

    /** Returns a new {@code Jdbi} (with its own pool) over the database under test. */
    abstract Jdbi newJdbi();

    /** The dialect to force, or null to let the store detect it. */
    JdbiOutboxStore.Dialect dialect() {
        return null;
    }

    String table() {
        return "outbox_members_tck";
    }

    private JdbiOutboxStore.Builder builder(Jdbi jdbi) {
        JdbiOutboxStore.Builder b = JdbiOutboxStore.builder(jdbi).tableName(table());
        return dialect() == null ? b : b.dialect(dialect());
    }

    private record Setup(Jdbi jdbi, JdbiOutboxStore first, JdbiOutboxStore second) {}

    private Setup setup() {
        return SETUPS.computeIfAbsent(
                getClass(),
                k -> {
                    Jdbi jdbi = newJdbi();
                    JdbiOutboxStore first = builder(jdbi).build();
                    first.createSchemaIfAbsent();
                    return new Setup(jdbi, first, builder(newJdbi()).build());
                });
    }

    @Override
    protected OutboxStore store() {
        return setup().first();
    }

    @Override
    protected OutboxStore secondStore() {
        return setup().second();
    }

    @Override
    protected void resetStore() {
        setup().jdbi().useHandle(h -> h.execute(setup().first().sql().deleteAll));
        setup().first().clearMembers();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        setup().jdbi().useTransaction(h -> setup().first().enqueueAll(h, messages));
    }
}

/** The membership kit on PostgreSQL. */
class PostgresMembershipContractTest extends JdbiMembershipContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.postgres();
    }
}

/** The membership kit on MariaDB. */
class MariaDbMembershipContractTest extends JdbiMembershipContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.mariaDb();
    }
}

/** The membership kit with the MySQL dialect, run against MariaDB (no MySQL server here). */
class MySqlDialectOnMariaDbMembershipContractTest extends JdbiMembershipContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.mariaDb();
    }

    @Override
    JdbiOutboxStore.Dialect dialect() {
        return JdbiOutboxStore.Dialect.MYSQL;
    }

    @Override
    String table() {
        return "outbox_members_tck_mysql";
    }
}

/** The membership kit on H2 (in memory). */
class H2MembershipContractTest extends JdbiMembershipContractTest {
    @Override
    Jdbi newJdbi() {
        return Databases.h2("membership");
    }
}
