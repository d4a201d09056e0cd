package io.outbox4j.tck;

import static io.outbox4j.tck.Describe.deliveries;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

/**
 * Base of the admin kit's rule groups: the helpers every group uses (test data, dead letters set up
 * at given instants, statistics checked with a message) over the kit's shared {@link KitClock}, and
 * the kit's factories, which it calls on the {@link OutboxAdminContract} instance that runs the
 * rule.
 */
abstract class AdminRules extends KitRules {
    static final String OWNER = "tck-admin-owner";
    static final String OTHER = "tck-admin-other";
    static final String TOPIC_A = "tck.admin.a";
    static final String TOPIC_B = "tck.admin.b";
    static final String UNKNOWN_ID = "tck-id-that-was-never-enqueued";

    /** The kit instance that runs the rule, for its factories. */
    final OutboxAdminContract kit;

    AdminRules(OutboxAdminContract kit) {
        super(kit.clock);
        this.kit = kit;
    }

    @Override
    void resetStore() {
        kit.resetStore();
    }

    @Override
    OutboxStore store() {
        return kit.store();
    }

    OutboxAdmin admin() {
        return kit.admin();
    }

    @Override
    Duration clockSkewTolerance() {
        return kit.clockSkewTolerance();
    }

    @Override
    void enqueueCommitted(List<Message> messages) {
        kit.enqueueCommitted(messages);
    }

    Message.Builder message(String topic) {
        Message.Builder message = clock.message(topic);
        return message.contentType("application/json")
                .header("tenant", "t-" + clock.idCounter())
                .payload("{\"n\":" + clock.idCounter() + "}");
    }

    Message message() {
        return message(TOPIC_A).build();
    }

    @Override
    Message keyed(String key) {
        return message(TOPIC_A).key(key).build();
    }

    List<Delivery> claimAll(String owner) {
        return claimAll(store(), owner);
    }

    /** Claims everything and returns the deliveries by message id, checking all are there. */
    Map<String, Delivery> claimEach(Message... expected) {
        List<Delivery> got = claimAll(OWNER);
        Map<String, Delivery> byId = new LinkedHashMap<>();
        got.forEach(d -> byId.put(d.message().id(), d));
        List<String> wanted = Arrays.stream(expected).map(Message::id).toList();
        assertThat(byId.keySet())
                .as(
                        "setting up: a claim at %s must lease %s, but your store returned %s%s",
                        now(),
                        wanted,
                        deliveries(got),
                        got.isEmpty()
                                ? " (if your store's enqueue clock runs more than"
                                        + " clockSkewTolerance() = "
                                        + clockSkewTolerance()
                                        + " ahead of this JVM's, raise it)"
                                : "")
                .containsAll(wanted);
        return byId;
    }

    /**
     * The delivery of {@code m} in what {@link #claimEach} returned (which checked it is there).
     */
    static Delivery claimed(Map<String, Delivery> claimed, Message m) {
        return Objects.requireNonNull(claimed.get(m.id()), m.id());
    }

    /** Claims the messages and dead-letters each at the given instant with a reason naming it. */
    void deadLetter(Map<Message, Instant> deadAt) {
        Map<String, Delivery> leases = claimEach(deadAt.keySet().toArray(new Message[0]));
        deadAt.forEach((m, at) -> deadLetterLeased(leases, m, at));
    }

    /**
     * Dead-letters {@code m}, whose lease is in {@code leases}, at {@code at} with a reason naming
     * it; the dead-lettering must succeed.
     */
    void deadLetterLeased(Map<String, Delivery> leases, Message m, Instant at) {
        assertThat(
                        store().deadLetter(
                                        new DeadLetter(
                                                OWNER,
                                                claimed(leases, m).receipt(),
                                                reasonOf(m),
                                                at)))
                .as("setting up: deadLetter of '%s' with its live receipt", m.id())
                .isTrue();
    }

    void deadLetterNow(Message... messages) {
        Map<Message, Instant> at = new LinkedHashMap<>();
        for (Message m : messages) {
            at.put(m, now());
        }
        deadLetter(at);
    }

    static String reasonOf(Message m) {
        return "tck: given up on " + m.id() + " — «permanent» ✓";
    }

    /** Every dead letter, page by page with the given query, checked to end. */
    List<DeadMessage> listAll(DeadLetterQuery query) {
        List<DeadMessage> all = new ArrayList<>();
        DeadLetterQuery q = query;
        for (int pages = 0; pages < 1000; pages++) {
            DeadLetterPage page = admin().deadLetters(q);
            all.addAll(page.items());
            if (page.next().isEmpty()) {
                return all;
            }
            q = query.after(page.next().get());
        }
        throw new AssertionError(
                "deadLetters(" + query + ") kept returning a next cursor for 1000 pages");
    }

    static List<String> idsOfDead(List<DeadMessage> dead) {
        return dead.stream().map(d -> d.message().id()).collect(Collectors.toList());
    }

    static List<String> idsOf(Message... messages) {
        return Arrays.stream(messages).map(Message::id).toList();
    }

    static void assertCounts(
            OutboxStatistics stats,
            TopicStatistics actual,
            String of,
            long ready,
            long delayed,
            long leased,
            long dead,
            String setup) {
        assertThat(List.of(actual.ready(), actual.delayed(), actual.leased(), actual.dead()))
                .as(
                        "statistics(%s) of %s must count ready=%d, delayed=%d, leased=%d, dead=%d (%s),"
                                + " but your store counted ready=%d, delayed=%d, leased=%d, dead=%d",
                        stats.at(),
                        of,
                        ready,
                        delayed,
                        leased,
                        dead,
                        setup,
                        actual.ready(),
                        actual.delayed(),
                        actual.leased(),
                        actual.dead())
                .containsExactly(ready, delayed, leased, dead);
    }

    TopicStatistics topic(OutboxStatistics stats, String topic) {
        TopicStatistics t = stats.byTopic().get(topic);
        assertThat(t)
                .as(
                        "statistics must count topic '%s', which has messages, but your store listed"
                                + " only %s",
                        topic, stats.byTopic().keySet())
                .isNotNull();
        return Objects.requireNonNull(t);
    }

    /**
     * Enqueues {@code count} messages of {@link #TOPIC_A} and dead-letters the i-th at {@code
     * at.apply(i)} (worked out before the enqueue moves the kit's clock).
     */
    Message[] deadLettersAt(int count, IntFunction<Instant> at) {
        Message[] dead = new Message[count];
        Map<Message, Instant> deadAt = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            dead[i] = message();
            deadAt.put(dead[i], at.apply(i));
        }
        committed(dead);
        deadLetter(deadAt);
        return dead;
    }

    /** The ids of each page of dead letters that {@code query} and its cursors list, 10 at most. */
    List<List<String>> pagesOf(DeadLetterQuery query) {
        List<List<String>> pages = new ArrayList<>();
        DeadLetterPage page = admin().deadLetters(query);
        pages.add(idsOfDead(page.items()));
        while (page.next().isPresent() && pages.size() < 10) {
            page = admin().deadLetters(query.after(page.next().get()));
            pages.add(idsOfDead(page.items()));
        }
        return pages;
    }

    /**
     * Dead letters spread over time for the filter rules: {@code a1}, {@code a2} and {@code a3} of
     * {@link #TOPIC_A} dead at {@code t}, {@code t} + 10 s and {@code t} + 20 s, and {@code b} of
     * {@link #TOPIC_B} dead at {@code t} + {@code bAfter}, where {@code t} is a minute after the
     * kit's clock.
     */
    record Spread(Instant t, Message a1, Message a2, Message a3, Message b) {}

    /**
     * Sets up a {@link Spread}; {@code alive} more messages of {@link #TOPIC_A} are enqueued with
     * it and stay alive (the claim that sets the dead letters up leases them).
     */
    Spread spreadDeadLetters(Duration bAfter, Message... alive) {
        Instant t = now().plus(Duration.ofMinutes(1));
        Spread s = new Spread(t, message(), message(), message(), message(TOPIC_B).build());
        List<Message> all = new ArrayList<>(List.of(s.a1(), s.a2(), s.a3(), s.b()));
        all.addAll(Arrays.asList(alive));
        committed(all);
        Map<Message, Instant> at = new LinkedHashMap<>();
        at.put(s.a1(), t);
        at.put(s.a2(), t.plusSeconds(10));
        at.put(s.a3(), t.plusSeconds(20));
        at.put(s.b(), t.plus(bAfter));
        deadLetter(at);
        return s;
    }

    /**
     * Enqueues two messages of the key, dead-letters the first and checks that the second is held
     * back behind it.
     *
     * @return the dead head and its follower
     */
    Message[] headDeadWithAFollower(String key) {
        Message head = keyed(key);
        Message next = keyed(key);
        committed(head);
        deadLetterNow(head);
        committed(next);
        assertThat(claimAll(OTHER))
                .as(
                        "setting up: '%s' must be held back behind the dead letter '%s'",
                        next.id(), head.id())
                .isEmpty();
        return new Message[] {head, next};
    }
}
