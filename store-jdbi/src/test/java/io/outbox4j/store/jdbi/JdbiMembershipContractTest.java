package io.outbox4j.store.jdbi;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.store.jdbi.KitDatabase.KitStore;
import io.outbox4j.tck.OutboxMembershipContract;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The membership kit on one database: a subclass names the database. The two stores use two
 * connection pools over the same table, like two relays.
 */
abstract class JdbiMembershipContractTest extends OutboxMembershipContract {
    private static final String TABLE = "outbox_members_tck";
    private static final Map<Class<?>, Setup> SETUPS = new ConcurrentHashMap<>();

    private final KitDatabase database;

    /** The kit on {@code database}, in its table {@code outbox_members_tck}. */
    JdbiMembershipContractTest(KitDatabase database) {
        this.database = database;
    }

    private record Setup(KitStore first, JdbiOutboxStore second) {}

    private Setup setup() {
        return SETUPS.computeIfAbsent(
                getClass(),
                k ->
                        new Setup(
                                database.createStore(TABLE),
                                database.builder(database.newJdbi(), TABLE).build()));
    }

    @Override
    protected OutboxStore store() {
        return setup().first().store();
    }

    @Override
    protected OutboxStore secondStore() {
        return setup().second();
    }

    @Override
    protected void resetStore() {
        setup().first().deleteAll();
        setup().first().store().clearMembers();
    }

    @Override
    protected void enqueueCommitted(List<Message> messages) {
        setup().first().enqueueCommitted(messages);
    }
}

/** The membership kit on PostgreSQL. */
class PostgresMembershipContractTest extends JdbiMembershipContractTest {
    PostgresMembershipContractTest() {
        super(KitDatabase.POSTGRES);
    }
}

/** The membership kit on MariaDB. */
class MariaDbMembershipContractTest extends JdbiMembershipContractTest {
    MariaDbMembershipContractTest() {
        super(KitDatabase.MARIADB);
    }
}

/** The membership kit with the MySQL dialect, run against MariaDB (no MySQL server here). */
class MySqlDialectOnMariaDbMembershipContractTest extends JdbiMembershipContractTest {
    MySqlDialectOnMariaDbMembershipContractTest() {
        super(KitDatabase.MYSQL_ON_MARIADB);
    }
}

/** The membership kit on H2 (in memory). */
class H2MembershipContractTest extends JdbiMembershipContractTest {
    H2MembershipContractTest() {
        super(KitDatabase.h2("membership"));
    }
}
