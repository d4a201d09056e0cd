package io.outbox4j.examples.quickstart;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.store.jdbi.JdbiOutboxStore;
import org.jdbi.v3.core.Jdbi;

/**
 * The order service on a relational database through Jdbi: H2 (embedded), PostgreSQL or
 * MariaDB/MySQL.
 */
final class JdbiBackend implements StoreBackend {
    private final HikariDataSource dataSource;
    private final Jdbi jdbi;
    private final JdbiOutboxStore outbox;
    private final String url;

    JdbiBackend(String url, int poolSize) {
        this.url = url;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(poolSize);
        config.setPoolName("quickstart");
        this.dataSource = new HikariDataSource(config);
        this.jdbi = Jdbi.create(dataSource);
        // tag::jdbi-setup[]
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        // end::jdbi-setup[]
        this.outbox = store;
        jdbi.useHandle(
                h ->
                        h.execute(
                                "create table if not exists quickstart_orders (id varchar(64) primary key, "
                                        + "customer varchar(64) not null, amount bigint not null)"));
    }

    @Override
    public OutboxStore store() {
        return outbox;
    }

    @Override
    public void placeOrder(Order order, Message event) {
        JdbiOutboxStore outbox = this.outbox;
        // tag::jdbi-enqueue[]
        jdbi.useTransaction(
                handle -> {
                    handle.createUpdate(
                                    "insert into quickstart_orders (id, customer, amount) values (:id, :customer, :amount)")
                            .bind("id", order.id())
                            .bind("customer", order.customer())
                            .bind("amount", order.amount())
                            .execute();
                    outbox.enqueue(handle, event); // commits or rolls back with the order
                });
        // end::jdbi-enqueue[]
    }

    @Override
    public long orderCount(String idPrefix) {
        return jdbi.withHandle(
                h ->
                        h.createQuery(
                                        "select count(*) from quickstart_orders where id like :prefix")
                                .bind("prefix", idPrefix + "%")
                                .mapTo(Long.class)
                                .one());
    }

    @Override
    public String describe() {
        return url.startsWith("jdbc:h2:mem:")
                ? "H2 (embedded, in memory)"
                : url.replaceAll("password=[^&;]*", "password=***");
    }

    @Override
    public void close() {
        dataSource.close();
    }
}
