package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Buckets;
import io.outbox4j.api.Message;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The bucket every database computes for a key (a generated column) is {@link Buckets#of}'s, for
 * ASCII, non-ASCII and long keys alike, and a message without a key has none; and the DDL upgrades
 * a table created before the column existed (PostgreSQL, MariaDB and H2 run the same script).
 */
class BucketColumnTest {
    static Stream<Arguments> databases() {
        return Databases.eachDatabase("buckets");
    }

    private static List<String> keys() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            keys.add("customer-" + i);
        }
        keys.add("é");
        keys.add("日本語のキー");
        keys.add("emoji-\uD83D\uDE00");
        keys.add("x".repeat(255));
        return keys;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void theDatabaseComputesBucketsOfEveryKey(
            String name, java.util.function.Supplier<Jdbi> database) {
        Jdbi jdbi = database.get();
        JdbiOutboxStore store =
                JdbiOutboxStore.builder(jdbi).tableName("outbox_buckets_test").build();
        store.createSchemaIfAbsent();
        jdbi.useHandle(h -> h.execute(store.sql().deleteAll));
        List<Message> messages = new ArrayList<>();
        Map<String, Integer> expected = new HashMap<>();
        int i = 0;
        for (String key : keys()) {
            String id = "b" + i++;
            messages.add(
                    Message.builder().id(id).topic("t").module("m").key(key).payload("p").build());
            expected.put(id, Buckets.of(key));
        }
        messages.add(Message.builder().id("unkeyed").topic("t").module("m").payload("p").build());
        jdbi.useTransaction(h -> store.enqueueAll(h, messages));
        Map<String, Integer> computed = new HashMap<>();
        jdbi.useHandle(
                h ->
                        h.createQuery("SELECT id, bucket FROM " + store.sql().table)
                                .map(
                                        (rs, ctx) -> {
                                            String id = rs.getString(1);
                                            int b = rs.getInt(2);
                                            computed.put(id, rs.wasNull() ? null : b);
                                            return b;
                                        })
                                .list());
        assertThat(computed.remove("unkeyed")).as("a message without a key has no bucket").isNull();
        assertThat(computed)
                .as("the bucket %s computes for each key must be Buckets.of(key)", name)
                .isEqualTo(expected);
        assertThat(expected.values()).as("the keys cover high and low buckets").contains(0, 255);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void createSchemaIfAbsentUpgradesATableWithoutBuckets(
            String name, java.util.function.Supplier<Jdbi> database) {
        Jdbi jdbi = database.get();
        String table = "outbox_upgrade_test";
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName(table).build();
        store.createSchemaIfAbsent();
        jdbi.useHandle(
                h -> {
                    h.execute(store.sql().deleteAll);
                    h.execute("ALTER TABLE " + store.sql().table + " DROP COLUMN bucket");
                    h.execute("DROP TABLE " + store.sql().membersTable);
                    h.execute("DROP TABLE " + store.sql().bucketsTable);
                });
        jdbi.useTransaction(
                h ->
                        store.enqueue(
                                h,
                                Message.builder()
                                        .id("old")
                                        .topic("t")
                                        .module("m")
                                        .key("customer-7")
                                        .payload("p")
                                        .build()));
        store.createSchemaIfAbsent(); // the 0.2 script over a 0.1 table
        Integer bucket =
                jdbi.withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT bucket FROM "
                                                        + store.sql().table
                                                        + " WHERE id = 'old'")
                                        .mapTo(Integer.class)
                                        .one());
        assertThat(bucket)
                .as("the row enqueued before the upgrade gets its bucket")
                .isEqualTo(Buckets.of("customer-7"));
        assertThat(store.renew("upgrader", java.time.Duration.ofSeconds(5)).buckets())
                .as("the upgraded outbox has its 256 buckets")
                .hasSize(Buckets.COUNT);
        store.leave("upgrader");
    }
}
