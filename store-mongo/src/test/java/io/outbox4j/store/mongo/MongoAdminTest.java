package io.outbox4j.store.mongo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxStatistics;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the MongoDB store's admin port does beyond the admin kit. */
class MongoAdminTest {
    private static final Instant ENQUEUED = Instant.parse("2030-01-02T03:04:05.123456Z");
    private static final Instant NOW = ENQUEUED.plusSeconds(10);

    private MongoOutboxStore store;

    @BeforeEach
    void freshCollection() {
        store = Mongo.storeAt("admin", ENQUEUED);
    }

    @Test
    void deadLetters_aCursorThisStoreDidNotIssueIsRejected() {
        assertThatThrownBy(() -> store.deadLetters(DeadLetterQuery.all().after("not-a-cursor")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cursor 'not-a-cursor' was not issued by this store");
    }

    @Test
    void deadLetters_leaveOutADocumentThatIsNotAMessage_whichLastErrorAndDiscardStillReach() {
        Mongo.insertNotAMessage(store);
        store.insert(null, List.of(Message.builder().id("m-1").topic("t").module("m").build()));
        assertThat(store.claim(new ClaimRequest("relay", NOW, Duration.ofMinutes(1), 10)))
                .extracting(d -> d.message().id())
                .containsExactly("m-1");

        DeadLetterPage page = store.deadLetters(DeadLetterQuery.all());
        assertThat(page.items()).isEmpty();
        assertThat(page.next()).isEmpty();
        assertThat(store.lastError("written-by-hand"))
                .hasValueSatisfying(
                        reason ->
                                assertThat(reason)
                                        .startsWith(
                                                "stored document is not a valid outbox message"));
        assertThat(store.statistics(NOW).total().dead()).isEqualTo(1);
        assertThat(store.discard(List.of("written-by-hand"))).isEqualTo(1);
        assertThat(store.statistics(NOW).total().dead()).isZero();
    }

    @Test
    void statistics_countParkedMessagesAsReady_andLeasesThatEndedAsReadyToo() {
        store.insert(
                null,
                List.of(
                        Message.builder().id("k-1").key("K").topic("a").module("m").build(),
                        Message.builder().id("k-2").key("K").topic("a").module("m").build()));
        store.claim(new ClaimRequest("relay-a", NOW, Duration.ofMinutes(1), 1));
        assertThat(store.claim(new ClaimRequest("relay-b", NOW, Duration.ofMinutes(1), 5)))
                .isEmpty();

        OutboxStatistics during = store.statistics(NOW);
        assertThat(during.total().leased()).isEqualTo(1);
        assertThat(during.total().ready()).as("k-2, parked behind k-1").isEqualTo(1);
        assertThat(during.total().oldestReadyAge()).isEqualTo(Duration.ofSeconds(10));
        assertThat(during.byTopic()).containsOnlyKeys("a");

        OutboxStatistics after = store.statistics(NOW.plus(Duration.ofMinutes(2)));
        assertThat(after.total().leased()).as("the lease has ended").isZero();
        assertThat(after.total().ready()).isEqualTo(2);
    }
}
