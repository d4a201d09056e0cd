package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A key whose first row is parked (what a 0.1 relay parking under the old claim lock beside 0.2
 * relays can leave behind during a rolling upgrade) is unparked by the first renewal of a member
 * owning its bucket, and drains in order; a parked row with a live predecessor stays parked.
 */
class OrphanSweepTest {
    static Stream<Arguments> databases() {
        return Databases.eachDatabase("orphans");
    }

    private static Message keyed(String id, String key) {
        return Message.builder().id(id).topic("t").module("m").key(key).payload("p").build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aParkedFirstRowOfItsKeyIsUnparkedAtTheNextRenewal(String name, Supplier<Jdbi> database) {
        Jdbi jdbi = database.get();
        JdbiOutboxStore setup = Databases.createdStore(jdbi, "outbox_orphans");
        jdbi.useHandle(h -> h.execute(setup.sql().deleteAll));
        setup.clearMembers();
        jdbi.useTransaction(
                h ->
                        setup.enqueueAll(
                                h,
                                List.of(
                                        keyed("orphan-1", "k-orphan"),
                                        keyed("orphan-2", "k-orphan"),
                                        keyed("held-1", "k-held"),
                                        keyed("held-2", "k-held"))));
        // orphan-1 and orphan-2 parked with nothing before them; held-2 parked behind held-1
        jdbi.useHandle(
                h ->
                        h.execute(
                                "UPDATE "
                                        + setup.sql().table
                                        + " SET parked = TRUE WHERE id IN ('orphan-1', 'orphan-2',"
                                        + " 'held-2')"));
        Instant now = Instant.now();
        ClaimRequest claim = new ClaimRequest("sweeper", now, Duration.ofMinutes(1), 10, true);
        JdbiOutboxStore store = JdbiOutboxStore.builder(jdbi).tableName("outbox_orphans").build();
        store.renew("sweeper", Duration.ofSeconds(30));
        List<Delivery> got = store.claim(claim);
        assertThat(got)
                .extracting(d -> d.message().id())
                .as(
                        "%s: the orphaned key's first row is claimable again, and the held key's head",
                        name)
                .containsExactlyInAnyOrder("orphan-1", "held-1");
        Delivery first =
                got.stream()
                        .filter(d -> d.message().id().equals("orphan-1"))
                        .findFirst()
                        .orElseThrow();
        assertThat(store.complete(new Completion("sweeper", List.of(first.receipt())))).isEmpty();
        assertThat(store.claim(claim))
                .extracting(d -> d.message().id())
                .as("%s: completing it unparks the rest of its key, in order", name)
                .containsExactly("orphan-2");
        Boolean heldParked =
                jdbi.withHandle(
                        h ->
                                h.createQuery(
                                                "SELECT parked FROM "
                                                        + setup.sql().table
                                                        + " WHERE id = 'held-2'")
                                        .mapTo(Boolean.class)
                                        .one());
        assertThat(heldParked).as("a parked row behind a live row stays parked").isTrue();
        store.leave("sweeper");
    }
}
