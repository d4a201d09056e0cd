package io.outbox4j.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL member claims leave alone the next messages of a key the member itself holds
 * (ClaimWalk): a relay whose in-flight bound exceeds its keys no longer parks, and later unparks,
 * the row behind each of its own in-flight messages (the parking churn of the {@code scale-io}
 * benchmark's tuning series), while a deep backlog of such a key is still parked, so it does not
 * hide other keys.
 */
class PostgresOwnFollowersTest {
    private static final String TABLE = "outbox_own_followers";
    private static final Duration LEASE = Duration.ofMinutes(1);

    private Jdbi jdbi;
    private JdbiOutboxStore store;

    @BeforeEach
    void emptyTable() {
        jdbi = Databases.postgres();
        store = JdbiOutboxStore.builder(jdbi).tableName(TABLE).build();
        store.createSchemaIfAbsent();
        jdbi.useHandle(h -> h.execute(store.sql().deleteAll));
        store.clearMembers();
    }

    private static Message keyed(String id, String key) {
        return Message.builder().id(id).topic("t").module("m").key(key).payload("p").build();
    }

    private void enqueue(List<Message> messages) {
        jdbi.useTransaction(h -> store.enqueueAll(h, messages));
    }

    /** A member's claim (the member owns every bucket: it is the only one). */
    private List<Delivery> claim(String owner, int limit) {
        store.renew(owner, Duration.ofMinutes(1));
        return store.claim(new ClaimRequest(owner, Instant.now(), LEASE, limit, true));
    }

    /** A claim of every bucket, not as a member. */
    private List<Delivery> claimEveryBucket(String owner, int limit) {
        return store.claim(new ClaimRequest(owner, Instant.now(), LEASE, limit));
    }

    private static List<String> ids(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> d.message().id()).toList();
    }

    private List<String> parked() {
        return jdbi.withHandle(
                h ->
                        h.createQuery(
                                        "SELECT id FROM "
                                                + store.sql().table
                                                + " WHERE parked ORDER BY seq")
                                .mapTo(String.class)
                                .list());
    }

    @Test
    void theNextMessagesOfAnOwnKeyAreNotParked_itsDeepBacklogIs_andOtherKeysAreTaken() {
        List<Message> a = new ArrayList<>();
        for (int i = 1; i <= ClaimWalk.SKIP_DEPTH + 3; i++) {
            a.add(keyed("a" + i, "a"));
        }
        List<Message> all = new ArrayList<>(a);
        all.add(keyed("b1", "b"));
        enqueue(all);
        assertThat(ids(claim("relay", 1))).containsExactly("a1");

        assertThat(ids(claim("relay", 20)))
                .as("the relay holding a1 takes b1, the first of another key, past a's backlog")
                .containsExactly("b1");
        List<String> deep = new ArrayList<>();
        for (int i = ClaimWalk.SKIP_DEPTH + 2; i <= ClaimWalk.SKIP_DEPTH + 3; i++) {
            deep.add("a" + i);
        }
        assertThat(parked())
                .as(
                        "the %d messages of a behind a1 (held by the claimer) stay in the claim"
                                + " index; the deeper backlog is parked",
                        ClaimWalk.SKIP_DEPTH)
                .containsExactlyElementsOf(deep);

        assertThat(claimEveryBucket("other", 20))
                .as("a's backlog waits for a1 for every claimer")
                .isEmpty();
        assertThat(parked())
                .as("a claim of every bucket, which does not hold a1, parks a's backlog as before")
                .containsExactlyElementsOf(messageIds(a.subList(1, a.size())));
    }

    private static List<String> messageIds(List<Message> messages) {
        return messages.stream().map(Message::id).toList();
    }

    @Test
    void aClaimThatMeetsOnlyTheNextMessagesOfItsOwnKeys_parksNothing_andTakesThemOnceFree() {
        List<Message> heads = new ArrayList<>();
        List<Message> seconds = new ArrayList<>();
        for (int k = 0; k < 20; k++) {
            heads.add(keyed("h" + k, "k" + k));
        }
        for (int k = 0; k < 20; k++) {
            seconds.add(keyed("s" + k, "k" + k));
        }
        List<Message> all = new ArrayList<>(heads);
        all.addAll(seconds);
        enqueue(all);
        List<Delivery> held = claim("relay", 20);
        assertThat(ids(held)).hasSize(20).allMatch(id -> id.startsWith("h"));

        assertThat(claim("relay", 5))
                .as("every row left is the next message of a key the relay holds")
                .isEmpty();
        assertThat(parked()).as("nothing parked behind the relay's own messages").isEmpty();

        assertThat(store.complete(new Completion("relay", List.of(held.get(3).receipt()))))
                .isEmpty();
        assertThat(ids(claim("relay", 20)))
                .as("the completion makes the key's next message claimable, without an unpark")
                .containsExactly("s3");
    }
}
