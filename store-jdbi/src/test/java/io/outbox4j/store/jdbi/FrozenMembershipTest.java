package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A member frozen in the middle of its renewal (found by the SIGSTOP drill of fault-tests: it held
 * every bucket row, every other renewal waited for it, all leases ran out and every relay stopped)
 * no longer holds anyone up: the others' renewals return at once, keep their leases and their
 * claims, and the assignment is written again once the frozen one is gone.
 */
class FrozenMembershipTest {
    static Stream<Arguments> databases() {
        return Databases.eachDatabase("frozen-members");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("databases")
    void aRenewalFrozenWhileItHoldsTheMembershipLock_holdsNobodyUp(
            String name, Supplier<Jdbi> database) throws Exception {
        Jdbi jdbi = database.get();
        JdbiOutboxStore store = Databases.createdStore(jdbi, "outbox_frozen");
        jdbi.useHandle(h -> h.execute(store.sql().deleteAll));
        store.clearMembers();
        store.renew("frozen", Duration.ofMinutes(1));
        Membership before = store.renew("live", Duration.ofSeconds(2));
        jdbi.useTransaction(
                h ->
                        store.enqueueAll(
                                h,
                                List.of(
                                        Message.builder()
                                                .id("m")
                                                .topic("t")
                                                .module("m")
                                                .key(keyOf(before))
                                                .payload("p")
                                                .build())));
        try (Handle frozen = jdbi.open()) {
            frozen.begin();
            assertThat(store.sql().lockMembership(frozen, true)).isTrue(); // and goes silent
            // renew late in the first lease, so that the renewed one outlasts it by over a second
            awaitClock(before.leaseUntil().minusMillis(800));
            long started = System.nanoTime();
            Membership renewed = store.renew("live", Duration.ofSeconds(2));
            long millis = (System.nanoTime() - started) / 1_000_000;
            assertThat(millis)
                    .as("%s: a renewal beside a frozen one returns at once", name)
                    .isLessThan(1500);
            assertThat(renewed.leaseUntil())
                    .as("%s: and extends its own lease", name)
                    .isAfter(before.leaseUntil());
            assertThat(renewed.buckets()).as("its buckets as they are").isEqualTo(before.buckets());
            awaitClock(before.leaseUntil().plusMillis(100)); // past the first lease's end
            assertThat(store.members())
                    .filteredOn(Member::live)
                    .extracting(Member::id)
                    .as("%s: still live after its first lease would have ended", name)
                    .contains("live");
            assertThat(
                            store.claim(
                                    new ClaimRequest(
                                            "live",
                                            Instant.now(),
                                            Duration.ofMinutes(1),
                                            10,
                                            true)))
                    .as("%s: it keeps claiming its buckets", name)
                    .hasSize(1);
            frozen.rollback();
        }
        store.leave("frozen");
        assertThat(store.renew("live", Duration.ofSeconds(2)).buckets())
                .as("%s: once the frozen one is gone, the assignment is written again", name)
                .hasSize(256);
        store.leave("live");
    }

    private static String keyOf(Membership m) {
        for (int i = 0; ; i++) {
            String key = "k" + i;
            if (m.buckets().contains(io.outbox4j.api.Buckets.of(key))) {
                return key;
            }
        }
    }

    /** Waits until this JVM's clock (the databases run on the same machine) reaches {@code at}. */
    private static void awaitClock(Instant at) {
        Awaitility.await("the clock reaches " + at)
                .dontCatchUncaughtExceptions()
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> !Instant.now().isBefore(at));
    }
}
