package io.outbox4j.tck;

import static io.outbox4j.tck.KitReport.defect;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.DeadLetterPage;
import io.outbox4j.api.DeadLetterQuery;
import io.outbox4j.api.DeadMessage;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The admin kit checks itself: it runs against the reference store's admin port wrapped in one
 * deliberate defect at a time, and each run must fail exactly the rules about that defect, with a
 * message that says what the store did wrong, while every other rule passes.
 */
class BrokenAdminsTest {

    // ------------------------------------------------------------------------------------------------
    // The broken admin ports, one defect each
    // ------------------------------------------------------------------------------------------------

    /** Control: the forwarding wrappers with no defect must pass every rule. */
    static class NoDefect extends BrokenAdminContract {}

    /** replay(…) clears the dead letter but forgets to let the messages behind it through. */
    static class ReplayKeepsTheKeyBlocked extends BrokenAdminContract {
        final Set<String> stuckKeys = new HashSet<>();
        final Set<String> replayed = new HashSet<>();

        @Override
        ForwardingStore wrapStore(InMemoryOutboxStore reference) {
            return new ForwardingStore(reference) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> out = new ArrayList<>();
                    List<String> giveBack = new ArrayList<>();
                    for (Delivery d : super.claim(r)) {
                        boolean stuck =
                                d.message().key().filter(stuckKeys::contains).isPresent()
                                        && !replayed.contains(d.message().id());
                        if (stuck) {
                            giveBack.add(d.receipt());
                        } else {
                            out.add(d);
                        }
                    }
                    if (!giveBack.isEmpty()) {
                        super.abandon(new Abandonment(r.owner(), giveBack));
                    }
                    return out;
                }
            };
        }

        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public int replay(List<String> ids, Instant now) {
                    for (String id : ids) {
                        dead(id).ifPresent(
                                        d -> {
                                            d.message().key().ifPresent(stuckKeys::add);
                                            replayed.add(id);
                                        });
                    }
                    return super.replay(ids, now);
                }
            };
        }
    }

    /** replay(…) does not reset the attempts. */
    static class ReplayKeepsTheAttempts extends BrokenAdminContract {
        final Map<String, Integer> before = new HashMap<>();

        @Override
        ForwardingStore wrapStore(InMemoryOutboxStore reference) {
            return ForwardingStore.changingClaims(
                    reference,
                    (r, d) ->
                            ForwardingStore.withAttempt(
                                    d, d.attempt() + before.getOrDefault(d.message().id(), 0)));
        }

        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public int replay(List<String> ids, Instant now) {
                    ids.forEach(id -> dead(id).ifPresent(d -> before.put(id, d.attempts())));
                    return super.replay(ids, now);
                }
            };
        }
    }

    /** replay(…) makes the message due at the store's own clock, not at the instant given. */
    static class ReplayIgnoresItsInstant extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public int replay(List<String> ids, Instant now) {
                    return super.replay(ids, Instant.now());
                }
            };
        }
    }

    /** replay(…) finds messages by id whatever their state, and releases live leases too. */
    static class ReplaysLiveMessages extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public int replay(List<String> ids, Instant now) {
                    int live = 0;
                    for (String id : ids) {
                        ForwardingStore.Lease l = store.latest.get(id);
                        if (l != null
                                && store.release(
                                        new Release(
                                                l.owner(),
                                                l.delivery().receipt(),
                                                now,
                                                "replay"))) {
                            live++;
                        }
                    }
                    return live + super.replay(ids, now);
                }
            };
        }
    }

    /** discard(…) deletes by id whatever the state, leased messages included. */
    static class DiscardsLiveMessages extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public int discard(List<String> ids) {
                    int live = 0;
                    for (String id : ids) {
                        ForwardingStore.Lease l = store.latest.get(id);
                        if (l != null
                                && store.complete(
                                                new Completion(
                                                        l.owner(), List.of(l.delivery().receipt())))
                                        .isEmpty()) {
                            live++;
                        }
                    }
                    return live + super.discard(ids);
                }
            };
        }
    }

    /** Lists each page newest first (ORDER BY dead_at DESC). */
    static class DeadLettersNewestFirst extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public DeadLetterPage deadLetters(DeadLetterQuery query) {
                    DeadLetterPage page = super.deadLetters(query);
                    List<DeadMessage> items = new ArrayList<>(page.items());
                    Collections.reverse(items);
                    return new DeadLetterPage(items, page.next());
                }
            };
        }
    }

    /**
     * A page after a cursor starts one item too late: the first item of every later page is lost.
     */
    static class CursorSkipsAnItem extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public DeadLetterPage deadLetters(DeadLetterQuery query) {
                    DeadLetterPage page = super.deadLetters(query);
                    if (query.after().isEmpty() || page.items().isEmpty()) {
                        return page;
                    }
                    return new DeadLetterPage(
                            page.items().subList(1, page.items().size()), page.next());
                }
            };
        }
    }

    /**
     * Reads limit + 1 dead letters to learn whether a next page exists, and forgets to drop the
     * extra one (its cursor follows the extra one, so nothing is repeated or lost).
     */
    static class PageHoldsOneMoreThanItsLimit extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public DeadLetterPage deadLetters(DeadLetterQuery query) {
                    return super.deadLetters(
                            query.limit(Math.min(query.limit() + 1, DeadLetterQuery.MAX_LIMIT)));
                }
            };
        }
    }

    /**
     * Pages by dead-letter time alone: the cursor is the last item's dead-letter time and the next
     * page starts strictly after it, so dead letters of that instant beyond the page are skipped.
     */
    static class CursorOfTheDeadLetterTimeAlone extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public DeadLetterPage deadLetters(DeadLetterQuery query) {
                    DeadLetterQuery filter = DeadLetterQuery.all().limit(DeadLetterQuery.MAX_LIMIT);
                    filter = query.topic().map(filter::topic).orElse(filter);
                    filter = query.deadFrom().map(filter::deadFrom).orElse(filter);
                    filter = query.deadBefore().map(filter::deadBefore).orElse(filter);
                    List<DeadMessage> all = new ArrayList<>();
                    DeadLetterPage page = super.deadLetters(filter);
                    all.addAll(page.items());
                    while (page.next().isPresent()) {
                        page = super.deadLetters(filter.after(page.next().get()));
                        all.addAll(page.items());
                    }
                    Optional<Instant> after = query.after().map(Instant::parse);
                    List<DeadMessage> rest =
                            all.stream()
                                    .filter(d -> after.isEmpty() || d.deadAt().isAfter(after.get()))
                                    .toList();
                    List<DeadMessage> items = rest.subList(0, Math.min(query.limit(), rest.size()));
                    Optional<String> next =
                            rest.size() > items.size()
                                    ? Optional.of(items.get(items.size() - 1).deadAt().toString())
                                    : Optional.empty();
                    return new DeadLetterPage(items, next);
                }
            };
        }
    }

    /** Lists the dead letters dead after deadFrom, leaving out those dead exactly at it. */
    static class DeadFromIsExclusiveInTheListing extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public DeadLetterPage deadLetters(DeadLetterQuery query) {
                    return super.deadLetters(
                            query.deadFrom()
                                    .map(from -> query.deadFrom(from.plusNanos(1)))
                                    .orElse(query));
                }
            };
        }
    }

    /**
     * Parks the followers a claim passes over and counts parked rows as delayed: after a claim that
     * returned fewer than its limit (so it walked every due message), until the next write, every
     * ready message is one held back behind its key, and the broken statistics call it delayed.
     */
    static class ParkedFollowersCountedAsDelayed extends BrokenAdminContract {
        volatile boolean parked;

        @Override
        ForwardingStore wrapStore(InMemoryOutboxStore reference) {
            return new ForwardingStore(reference) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> got = super.claim(r);
                    parked = got.size() < r.limit();
                    return got;
                }

                @Override
                public synchronized Set<String> complete(Completion completion) {
                    parked = false;
                    return super.complete(completion);
                }

                @Override
                public synchronized boolean deadLetter(DeadLetter deadLetter) {
                    parked = false;
                    return super.deadLetter(deadLetter);
                }

                @Override
                public synchronized Set<String> abandon(Abandonment abandonment) {
                    parked = false;
                    return super.abandon(abandonment);
                }
            };
        }

        @Override
        protected void enqueueCommitted(List<Message> messages) {
            parked = false;
            super.enqueueCommitted(messages);
        }

        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public OutboxStatistics statistics(Instant now) {
                    OutboxStatistics s = super.statistics(now);
                    if (!parked) {
                        return s;
                    }
                    Map<String, TopicStatistics> topics = new LinkedHashMap<>();
                    s.byTopic().forEach((t, v) -> topics.put(t, readyAsDelayed(v)));
                    return new OutboxStatistics(
                            s.at(), readyAsDelayed(s.total()), topics, s.blockedKeys());
                }

                @Override
                public int replay(List<String> ids, Instant now) {
                    parked = false;
                    return super.replay(ids, now);
                }

                @Override
                public int replayAll(DeadLetterQuery filter, Instant now) {
                    parked = false;
                    return super.replayAll(filter, now);
                }
            };
        }

        static TopicStatistics readyAsDelayed(TopicStatistics t) {
            return new TopicStatistics(
                    0, t.delayed() + t.ready(), t.leased(), t.dead(), Duration.ZERO);
        }
    }

    /** Counts a message as leased while it has an owner, even after its lease ended. */
    static class ExpiredLeasesCountedAsLeased extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public OutboxStatistics statistics(Instant now) {
                    OutboxStatistics s = super.statistics(now);
                    Map<String, TopicStatistics> topics = new LinkedHashMap<>(s.byTopic());
                    TopicStatistics total = s.total();
                    for (ForwardingStore.Lease l : store.latest.values()) {
                        if (!l.until().isAfter(now)) {
                            String t = l.delivery().message().topic();
                            topics.computeIfPresent(t, (k, v) -> moveToLeased(v));
                            total = moveToLeased(total);
                        }
                    }
                    return new OutboxStatistics(s.at(), total, topics, s.blockedKeys());
                }
            };
        }

        static TopicStatistics moveToLeased(TopicStatistics t) {
            return new TopicStatistics(
                    t.ready() - 1, t.delayed(), t.leased() + 1, t.dead(), t.oldestReadyAge());
        }
    }

    /** blockedKeys is always 0. */
    static class BlockedKeysNotCounted extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public OutboxStatistics statistics(Instant now) {
                    OutboxStatistics s = super.statistics(now);
                    return new OutboxStatistics(s.at(), s.total(), s.byTopic(), 0);
                }
            };
        }
    }

    /** replayAll(…) applies the topic of its filter but not the time range. */
    static class ReplayAllIgnoresTheTimeRange extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public int replayAll(DeadLetterQuery filter, Instant now) {
                    DeadLetterQuery all = DeadLetterQuery.all();
                    return super.replayAll(filter.topic().map(all::topic).orElse(all), now);
                }
            };
        }
    }

    /** discardAll(…) discards every dead letter, whatever its filter. */
    static class DiscardAllIgnoresTheFilter extends BrokenAdminContract {
        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public int discardAll(DeadLetterQuery filter) {
                    return super.discardAll(DeadLetterQuery.all());
                }
            };
        }
    }

    /** lastError(…) reads the release error column only, never the dead-letter reason. */
    static class LastErrorForgetsTheDeadReason extends BrokenAdminContract {
        final Map<String, String> releaseErrors = new HashMap<>();

        @Override
        ForwardingStore wrapStore(InMemoryOutboxStore reference) {
            return new ForwardingStore(reference) {
                @Override
                public synchronized boolean release(Release r) {
                    String id = idOfReceipt.get(r.receipt());
                    boolean done = super.release(r);
                    if (done) {
                        releaseErrors.put(id, r.error());
                    }
                    return done;
                }
            };
        }

        @Override
        OutboxAdmin breakIt(InMemoryOutboxStore reference, ForwardingStore store) {
            return new ForwardingAdmin(reference) {
                @Override
                public Optional<String> lastError(String id) {
                    return reference.attempts(id).isEmpty()
                            ? Optional.empty()
                            : Optional.ofNullable(releaseErrors.get(id));
                }
            };
        }
    }

    // ------------------------------------------------------------------------------------------------
    // The verdicts
    // ------------------------------------------------------------------------------------------------

    static Stream<Arguments> defects() {
        return Stream.of(
                defect(
                        "keeps the key of a replayed dead letter blocked",
                        ReplayKeepsTheKeyBlocked.class,
                        "required_replayUnblocksItsKey",
                        "must be claimable"),
                defect(
                        "keeps the attempts of a replayed dead letter",
                        ReplayKeepsTheAttempts.class,
                        "required_replayMakesTheDeadLetterDueAgainOnAttemptOne",
                        "is attempt 1, but your store reported 3",
                        "required_replayUnblocksItsKey",
                        "a replayed message starts again at attempt 1"),
                defect(
                        "replays to its own clock instead of the instant given",
                        ReplayIgnoresItsInstant.class,
                        "required_replayMakesTheDeadLetterDueAgainOnAttemptOne",
                        "must not get it yet"),
                defect(
                        "replays leased messages too",
                        ReplaysLiveMessages.class,
                        "required_replayIgnoresUnknownAndLiveMessages",
                        "must replay nothing, but your store said 1"),
                defect(
                        "discards leased messages too",
                        DiscardsLiveMessages.class,
                        "required_discardIgnoresUnknownAndLiveMessages",
                        "must discard nothing, but your store said 1"),
                defect(
                        "lists dead letters newest first",
                        DeadLettersNewestFirst.class,
                        "required_deadLettersListOldestFirstWithTheirDetails",
                        "oldest dead-letter time first",
                        "required_deadLettersOfOneInstantListInEnqueueOrder",
                        "must be listed in enqueue order",
                        "required_deadLettersArePagedWithACursor",
                        "must list each once, oldest first",
                        "required_deadLetterPagesSplitOneInstantWithoutLossOrRepeat",
                        "within the instant in enqueue order",
                        "required_deadLettersAreFilteredByTopicAndTime",
                        "(same instant, enqueue order)",
                        "required_replayAllReplaysWhatTheFilterSelects",
                        "only the dead letters outside the filter stay dead",
                        "required_discardAllDiscardsWhatTheFilterSelects",
                        "only the dead letters outside the filter stay"),
                defect(
                        "loses the first dead letter of every page after the first",
                        CursorSkipsAnItem.class,
                        "required_deadLettersArePagedWithACursor",
                        "must list each once, oldest first",
                        "required_deadLettersAreFilteredByTopicAndTime",
                        "every page keeps the filter",
                        "required_deadLetterPagesSplitOneInstantWithoutLossOrRepeat",
                        "must be listed each once"),
                defect(
                        "returns limit + 1 dead letters per page",
                        PageHoldsOneMoreThanItsLimit.class,
                        "required_deadLettersArePagedWithACursor",
                        "must not return the extra one",
                        "required_replayAllReplaysWhatTheFilterSelects",
                        "so its first page must hold one of them and have a next cursor"),
                defect(
                        "pages dead letters by their dead-letter time alone",
                        CursorOfTheDeadLetterTimeAlone.class,
                        "required_deadLetterPagesSplitOneInstantWithoutLossOrRepeat",
                        "skips or repeats the dead letters of that instant"),
                defect(
                        "lists dead letters from deadFrom exclusive",
                        DeadFromIsExclusiveInTheListing.class,
                        "required_replayAllReplaysWhatTheFilterSelects",
                        "deadFrom is inclusive) and",
                        "required_deadLettersAreFilteredByTopicAndTime",
                        "is inclusive and must list"),
                defect(
                        "counts the followers a claim passed over (parked) as delayed",
                        ParkedFollowersCountedAsDelayed.class,
                        "required_statisticsCountAFollowerAsReadyBeforeAndAfterAClaimPassesIt",
                        "after a claim of every message passed it over"),
                defect(
                        "counts a message whose lease ended as leased",
                        ExpiredLeasesCountedAsLeased.class,
                        "required_statisticsJudgeStatesAtTheGivenInstant",
                        "the lease ended (nobody renewed it)"),
                defect(
                        "never counts blocked keys",
                        BlockedKeysNotCounted.class,
                        "required_blockedKeysCountsKeysHeldBackByADeadLetter",
                        "so blockedKeys must be 2, but your store said 0"),
                defect(
                        "replays all dead letters of a topic whatever the time range",
                        ReplayAllIgnoresTheTimeRange.class,
                        "required_replayAllReplaysWhatTheFilterSelects",
                        "must replay"),
                defect(
                        "discards every dead letter whatever the filter",
                        DiscardAllIgnoresTheFilter.class,
                        "required_discardAllDiscardsWhatTheFilterSelects",
                        "must discard"),
                defect(
                        "returns the release error of a dead letter instead of its reason",
                        LastErrorForgetsTheDeadReason.class,
                        "required_lastErrorOfADeadLetterIsItsReason",
                        "must be its reason, not the earlier release error"));
    }

    @Test
    @DisplayName("the forwarding wrappers without a defect pass every rule of the admin kit")
    void noDefect_passesEveryRule() {
        KitReport.of(NoDefect.class)
                .assertEveryRulePasses(
                        "admin (defect-free wrappers)", ReferenceKitsTest.Kit.ADMIN.minimumRules);
    }

    @ParameterizedTest(
            name =
                    "an admin port that {0} fails exactly the rules about it, with a readable message")
    @MethodSource("defects")
    void eachDefectFailsExactlyItsRules(
            String does, Class<? extends BrokenAdminContract> kit, Map<String, String> rules) {
        BrokenStoresTest.assertBreaksExactly(kit, NoDefect.class, rules);
    }

    @Test
    @DisplayName("the table above covers every broken admin port declared in this class")
    void everyBrokenAdminIsChecked() {
        Set<Class<?>> checked =
                defects().map(a -> (Class<?>) a.get()[1]).collect(Collectors.toSet());
        Set<Class<?>> declared =
                Stream.of(BrokenAdminsTest.class.getDeclaredClasses())
                        .filter(BrokenAdminContract.class::isAssignableFrom)
                        .filter(c -> c != NoDefect.class)
                        .collect(Collectors.toSet());
        assertThat(checked).containsExactlyInAnyOrderElementsOf(declared);
    }
}
