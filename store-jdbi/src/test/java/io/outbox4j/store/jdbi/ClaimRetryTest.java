package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * A claim transaction the database aborts (a deadlock, a lock timeout) is tried again ({@code Db});
 * the new try must walk from what was committed, not from what the aborted try took. Found as a
 * per-key order violation of the kit's concurrency rule on H2 (lock timeouts under four claimers):
 * the second try took a follower because the aborted try had taken its predecessor, which meanwhile
 * another claimer held.
 */
class ClaimRetryTest {
    /** H2's lease statement of a claim. */
    private static final String LEASE = "FINAL TABLE (UPDATE";

    @Test
    void aRetriedClaimDoesNotTakeAFollowerOfARowOnlyTheAbortedTryTook() {
        String url = "jdbc:h2:mem:claim-retry-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        AtomicBoolean failNextLease = new AtomicBoolean();
        AtomicReference<Runnable> afterRollback = new AtomicReference<>();
        Jdbi jdbi =
                Jdbi.create(
                        () ->
                                failing(
                                        DriverManager.getConnection(url),
                                        failNextLease,
                                        afterRollback));
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).build();
        store.createSchemaIfAbsent();
        JdbiOutboxStore competitor = JdbiOutboxStore.builder(Jdbi.create(url)).build();
        jdbi.useTransaction(h -> store.enqueueAll(h, List.of(message("head"), message("next"))));

        List<Delivery> competitors = new ArrayList<>();
        afterRollback.set(
                () ->
                        competitors.addAll(
                                competitor.claim(
                                        new ClaimRequest(
                                                "competitor",
                                                Instant.now(),
                                                Duration.ofMinutes(1),
                                                1))));
        failNextLease.set(true);
        List<Delivery> mine =
                store.claim(new ClaimRequest("me", Instant.now(), Duration.ofMinutes(1), 10));

        assertThat(failNextLease).as("the first try's lease failed").isFalse();
        assertThat(ids(competitors))
                .as("between the two tries another claimer took the key's head")
                .containsExactly("head");
        assertThat(ids(mine))
                .as("the second try, while the other claimer holds the head of the key")
                .isEmpty();
    }

    private static Message message(String id) {
        return Message.builder()
                .id(id)
                .topic("orders")
                .module("shop")
                .key("k")
                .payload("{}")
                .build();
    }

    private static List<String> ids(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> d.message().id()).toList();
    }

    /**
     * A connection whose next lease statement fails as an H2 lock timeout (error 50200, which the
     * store tries again), and which runs {@code afterRollback} once after the rollback of that
     * transaction.
     */
    private static Connection failing(
            Connection c, AtomicBoolean failNextLease, AtomicReference<Runnable> afterRollback) {
        return (Connection)
                Proxy.newProxyInstance(
                        ClaimRetryTest.class.getClassLoader(),
                        new Class<?>[] {Connection.class},
                        (proxy, method, args) -> {
                            Object result = invoke(c, method, args);
                            if (method.getName().equals("prepareStatement")
                                    && args[0] instanceof String sql
                                    && sql.contains(LEASE)) {
                                return failingOnce((PreparedStatement) result, failNextLease);
                            }
                            if (method.getName().equals("rollback")
                                    && (args == null || args.length == 0)) {
                                Runnable r = afterRollback.getAndSet(null);
                                if (r != null) {
                                    r.run();
                                }
                            }
                            return result;
                        });
    }

    private static PreparedStatement failingOnce(PreparedStatement st, AtomicBoolean fail) {
        return (PreparedStatement)
                Proxy.newProxyInstance(
                        ClaimRetryTest.class.getClassLoader(),
                        new Class<?>[] {PreparedStatement.class},
                        (proxy, method, args) -> {
                            if (method.getName().startsWith("execute")
                                    && fail.compareAndSet(true, false)) {
                                throw new SQLException("injected lock timeout", "HYT00", 50200);
                            }
                            return invoke(st, method, args);
                        });
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args)
            throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
