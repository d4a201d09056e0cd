package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The admin kit's rules of the group "Dead letters"; {@link OutboxAdminContract} runs them as its
 * {@code @Nested} class {@code DeadLetters}.
 */
abstract class AdminDeadLetterRules extends AdminRules {
    AdminDeadLetterRules(OutboxAdminContract kit) {
        super(kit);
    }

    @Test
    @DisplayName(
            "dead letters are listed oldest dead-letter time first, with reason, attempts, times and the message as enqueued")
    void required_deadLettersListOldestFirstWithTheirDetails() {
        Instant before = Instant.now();
        Message x = message(TOPIC_A).key(nextKey()).build();
        Message y = message();
        Message z = message(TOPIC_B).build();
        Message alive = message();
        committed(x, y, z, alive);
        Map<String, Delivery> first = claimEach(x, y, z, alive);
        store().release(new Release(OWNER, claimed(first, y).receipt(), now(), "tck: retry"));
        Instant t = now();
        Map<Message, Instant> deadAt = new LinkedHashMap<>();
        deadAt.put(y, t.plus(Duration.ofMinutes(3)));
        deadLetterLeased(first, x, t.plus(Duration.ofMinutes(1)));
        deadLetterLeased(first, z, t.plus(Duration.ofMinutes(2)));
        deadLetter(deadAt); // y, on its second attempt
        List<DeadMessage> listed = admin().deadLetters(DeadLetterQuery.all()).items();
        assertThat(idsOfDead(listed))
                .as(
                        "deadLetters must list exactly the dead letters, oldest dead-letter time"
                                + " first: '%s' (+1 min), '%s' (+2 min), '%s' (+3 min); '%s' is leased"
                                + " and not listed; but your store listed %s",
                        x.id(), z.id(), y.id(), alive.id(), idsOfDead(listed))
                .containsExactly(x.id(), z.id(), y.id());
        Map<String, Object[]> expected = new LinkedHashMap<>();
        expected.put(x.id(), new Object[] {x, 1, t.plus(Duration.ofMinutes(1))});
        expected.put(z.id(), new Object[] {z, 1, t.plus(Duration.ofMinutes(2))});
        expected.put(y.id(), new Object[] {y, 2, t.plus(Duration.ofMinutes(3))});
        for (DeadMessage dead : listed) {
            Object[] e =
                    Objects.requireNonNull(expected.get(dead.message().id())); // listed: see above
            Message m = (Message) e[0];
            List<String> diffs = Describe.differences(m, dead.message());
            assertThat(diffs)
                    .as(
                            "the dead letter '%s' must carry the message exactly as enqueued, but"
                                    + " your store changed it: %s",
                            m.id(), String.join("; ", diffs))
                    .isEmpty();
            assertThat(dead.reason())
                    .as("the dead letter '%s' must keep its reason exactly", m.id())
                    .isEqualTo(reasonOf(m));
            assertThat(dead.attempts())
                    .as(
                            "the dead letter '%s' was tried %d time(s), but your store said %d",
                            m.id(), e[1], dead.attempts())
                    .isEqualTo(e[1]);
            assertThat(dead.deadAt())
                    .as(
                            "the dead letter '%s' was given up at %s (DeadLetter.at), but your store"
                                    + " said %s",
                            m.id(), e[2], dead.deadAt())
                    .isEqualTo(e[2]);
            assertThat(dead.enqueuedAt())
                    .as(
                            "the dead letter '%s' was enqueued between %s and %s (give or take"
                                    + " clockSkewTolerance() = %s), but your store said %s",
                            m.id(), before, t, clockSkewTolerance(), dead.enqueuedAt())
                    .isBetween(before.minus(clockSkewTolerance()), t);
        }
    }

    @Test
    @DisplayName(
            "dead letters given up at the same instant are listed in enqueue order, not by id or occurredAt")
    void required_deadLettersOfOneInstantListInEnqueueOrder() {
        Instant base =
                clock.wallAtStart().truncatedTo(ChronoUnit.SECONDS).minus(Duration.ofHours(2));
        String tag = clock.idPrefix() + "same-";
        Message z = message(TOPIC_A).id(tag + "z").occurredAt(base.plusSeconds(2)).build();
        Message a = message(TOPIC_A).id(tag + "a").occurredAt(base.plusSeconds(1)).build();
        Message m = message(TOPIC_A).id(tag + "m").occurredAt(base.plusSeconds(3)).build();
        committed(z, a, m);
        deadLetterNow(m, a, z);
        List<DeadMessage> listed = admin().deadLetters(DeadLetterQuery.all()).items();
        assertThat(idsOfDead(listed))
                .as(
                        "three dead letters of one instant, enqueued z, a, m, must be listed in"
                                + " enqueue order (not by id a, m, z nor by occurredAt a, z, m), but your"
                                + " store listed %s",
                        idsOfDead(listed))
                .containsExactly(z.id(), a.id(), m.id());
    }

    @Test
    @DisplayName(
            "dead letters are paged: each page holds at most its limit, and the cursor continues where the page ended")
    void required_deadLettersArePagedWithACursor() {
        DeadLetterPage empty = admin().deadLetters(DeadLetterQuery.all().limit(2));
        assertThat(empty.items().isEmpty() && empty.next().isEmpty())
                .as(
                        "with no dead letters the first page must be empty and the last, but your"
                                + " store returned %s items and next=%s",
                        empty.items().size(), empty.next())
                .isTrue();
        Instant t = now();
        Message[] dead = deadLettersAt(5, i -> t.plus(Duration.ofSeconds(i)));
        List<List<String>> pages = pagesOf(DeadLetterQuery.all().limit(2));
        List<Integer> sizes = pages.stream().map(List::size).toList();
        assertThat(sizes)
                .as(
                        "with limit 2 no page may hold more than 2 dead letters (a store that reads"
                                + " limit + 1 rows to learn whether a next page exists must not return"
                                + " the extra one), but your store returned the pages %s",
                        pages)
                .allMatch(n -> n <= 2);
        List<String> all = pages.stream().flatMap(List::stream).toList();
        assertThat(all)
                .as(
                        "paging 5 dead letters 2 at a time must list each once, oldest first (%s), but"
                                + " your store returned the pages %s",
                        idsOf(dead), pages)
                .containsExactlyElementsOf(idsOf(dead));
        assertThat(sizes.subList(0, Math.min(3, sizes.size())))
                .as(
                        "with limit 2, the pages must hold 2, 2 and 1 dead letters, but your store"
                                + " returned %s",
                        pages)
                .containsExactly(2, 2, 1);
        assertThat(pages)
                .as(
                        "the page with 1 dead letter (fewer than its limit) is the last: its next"
                                + " must be empty, but your store returned more pages: %s",
                        pages)
                .hasSize(3);
    }

    @Test
    @DisplayName("a page boundary between dead letters of one instant skips none and repeats none")
    void required_deadLetterPagesSplitOneInstantWithoutLossOrRepeat() {
        Instant t = now().plus(Duration.ofMinutes(1));
        Message[] dead =
                deadLettersAt(6, i -> i == 0 ? t : i == 5 ? t.plusSeconds(2) : t.plusSeconds(1));
        List<List<String>> pages = pagesOf(DeadLetterQuery.all().limit(2));
        assertThat(pages.stream().flatMap(List::stream).toList())
                .as(
                        "6 dead letters, the 2nd to 5th dead at the same instant %s, paged 2 at a"
                                + " time (so two page boundaries fall inside that instant) must be"
                                + " listed each once, oldest first and within the instant in enqueue"
                                + " order (%s), but your store returned the pages %s (a cursor that"
                                + " holds only the dead-letter time skips or repeats the dead letters"
                                + " of that instant at a page boundary)",
                        t.plusSeconds(1), idsOf(dead), pages)
                .containsExactlyElementsOf(idsOf(dead));
    }

    @Test
    @DisplayName(
            "dead letters are filtered by topic, by dead-letter time (from inclusive, before exclusive), and pages keep the filter")
    void required_deadLettersAreFilteredByTopicAndTime() {
        Spread s = spreadDeadLetters(Duration.ofSeconds(10));
        Instant t = s.t();
        List<String> ofB = idsOfDead(listAll(DeadLetterQuery.all().topic(TOPIC_B)));
        assertThat(ofB)
                .as(
                        "topic(%s) must list only '%s', but your store listed %s",
                        TOPIC_B, s.b().id(), ofB)
                .containsExactly(s.b().id());
        List<String> from = idsOfDead(listAll(DeadLetterQuery.all().deadFrom(t.plusSeconds(10))));
        assertThat(from)
                .as(
                        "deadFrom(%s) is inclusive and must list '%s', '%s' (same instant, enqueue"
                                + " order) and '%s', but your store listed %s",
                        t.plusSeconds(10), s.a2().id(), s.b().id(), s.a3().id(), from)
                .containsExactly(s.a2().id(), s.b().id(), s.a3().id());
        List<String> before =
                idsOfDead(listAll(DeadLetterQuery.all().deadBefore(t.plusSeconds(10))));
        assertThat(before)
                .as(
                        "deadBefore(%s) is exclusive and must list only '%s', but your store listed %s",
                        t.plusSeconds(10), s.a1().id(), before)
                .containsExactly(s.a1().id());
        DeadLetterQuery both =
                DeadLetterQuery.all()
                        .topic(TOPIC_A)
                        .deadFrom(t)
                        .deadBefore(t.plusSeconds(20))
                        .limit(1);
        List<String> filtered = idsOfDead(listAll(both));
        assertThat(filtered)
                .as(
                        "topic(%s), deadFrom(%s), deadBefore(%s), paged one at a time, must list '%s'"
                                + " then '%s' (every page keeps the filter), but your store listed %s",
                        TOPIC_A, t, t.plusSeconds(20), s.a1().id(), s.a2().id(), filtered)
                .containsExactly(s.a1().id(), s.a2().id());
    }
}
