package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Message;
import io.outbox4j.api.MessageLimits;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.Release;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Quis custodiet ipsos custodes: the kit runs (through junit-platform-testkit) against the
 * reference store wrapped in one deliberate defect at a time, and each run must fail exactly the
 * rules about that defect, with a message that says what the store did wrong, while every other
 * rule still passes.
 *
 * <p>The broken stores are static nested classes, so surefire (which excludes {@code *$*} classes)
 * never runs them directly.
 */
class BrokenStoresTest {

    // ------------------------------------------------------------------------------------------------
    // The broken stores, one defect each
    // ------------------------------------------------------------------------------------------------

    /** Control: the forwarding wrapper with no defect must pass every rule. */
    static class NoDefect extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store);
        }
    }

    /** Leases one message more than asked for. */
    static class IgnoresTheLimit extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    int limit = Math.min(ClaimRequest.MAX_LIMIT, r.limit() + 1);
                    return super.claim(new ClaimRequest(r.owner(), r.now(), r.lease(), limit));
                }
            };
        }
    }

    /** Also hands out messages that another owner holds under a live lease. */
    static class SharesLiveLeases extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> got = new ArrayList<>(super.claim(r));
                    Set<String> ids =
                            got.stream().map(d -> d.message().id()).collect(Collectors.toSet());
                    for (Lease l : latest.values()) {
                        if (got.size() < r.limit()
                                && !l.owner().equals(r.owner())
                                && l.until().isAfter(r.now())
                                && ids.add(l.delivery().message().id())) {
                            got.add(l.delivery());
                        }
                    }
                    return got;
                }
            };
        }
    }

    /** Selects the right messages but lists them newest first. */
    static class ListsNewestFirst extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    List<Delivery> got = new ArrayList<>(super.claim(r));
                    Collections.reverse(got);
                    return got;
                }
            };
        }
    }

    /** A lease never ends: a message whose lease expired never comes back (it is lost). */
    static class LeaseNeverExpires extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                private final Set<String> handedOut = new HashSet<>();

                @Override
                public synchronized List<Delivery> claim(ClaimRequest r) {
                    return super.claim(r).stream()
                            .filter(d -> handedOut.add(d.message().id()))
                            .collect(Collectors.toList());
                }

                @Override
                public synchronized boolean release(Release r) {
                    boolean done = super.release(r);
                    if (done) {
                        handedOut.remove(idOfReceipt.get(r.receipt()));
                    }
                    return done;
                }
            };
        }
    }

    /**
     * complete(…) finds the message by id and completes it, whatever the owner or receipt (DELETE
     * WHERE id = ?).
     */
    static class CompletesByMessageId extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized Set<String> complete(Completion c) {
                    Set<String> stale = new TreeSet<>();
                    for (String receipt : c.receipts()) {
                        String id = idOfReceipt.get(receipt);
                        Lease holder = id == null ? null : latest.get(id);
                        Completion one =
                                holder == null
                                        ? new Completion(c.owner(), List.of(receipt))
                                        : new Completion(
                                                holder.owner(),
                                                List.of(holder.delivery().receipt()));
                        if (!super.complete(one).isEmpty()) {
                            stale.add(receipt);
                        }
                    }
                    return stale;
                }
            };
        }
    }

    /** release(…) finds the message by id and releases it, whatever the owner or receipt. */
    static class ReleasesByMessageId extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized boolean release(Release r) {
                    String id = idOfReceipt.get(r.receipt());
                    Lease holder = id == null ? null : latest.get(id);
                    return holder == null
                            ? super.release(r)
                            : super.release(
                                    new Release(
                                            holder.owner(),
                                            holder.delivery().receipt(),
                                            r.availableAt(),
                                            r.error()));
                }
            };
        }
    }

    /** release(…) makes the message available at once, whatever availableAt says. */
    static class ReleaseIgnoresAvailableAt extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized boolean release(Release r) {
                    return super.release(
                            new Release(r.owner(), r.receipt(), Instant.EPOCH, r.error()));
                }
            };
        }
    }

    /**
     * Enqueues on a connection of its own in auto-commit mode, outside the caller's transaction.
     */
    static class RolledBackEnqueueVisible extends BrokenStoreContract {
        @Override
        protected void enqueueRolledBack(List<Message> messages) {
            reference.enqueueCommitted(messages);
        }
    }

    /** Reports attempt 1 on every claim. */
    static class AttemptNotCounted extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingDeliveries(
                    store, d -> new Delivery(d.message(), d.receipt(), 1, d.enqueuedAt()));
        }
    }

    /** Keeps the payload in a text column: bytes that are not valid UTF-8 are replaced. */
    static class PayloadStoredAsText extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingMessages(
                    store,
                    m ->
                            m.toBuilder()
                                    .limits(
                                            MessageLimits.DEFAULTS.withMaxPayloadBytes(
                                                    Integer.MAX_VALUE))
                                    .payload(new String(m.payload(), StandardCharsets.UTF_8))
                                    .build());
        }
    }

    /** Keeps headers in a JSON object that sorts its keys. */
    static class HeadersSorted extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingMessages(
                    store, m -> m.toBuilder().headers(new TreeMap<>(m.headers())).build());
        }
    }

    /**
     * deadLetter(…) records the reason but only delays the message by an hour: it is claimed again
     * later.
     */
    static class DeadLetterRetriesLater extends BrokenStoreContract {
        private final Map<String, String> reasons = new ConcurrentHashMap<>();

        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ForwardingStore(store) {
                @Override
                public synchronized boolean deadLetter(DeadLetter dl) {
                    String id = idOfReceipt.get(dl.receipt());
                    boolean done =
                            super.release(
                                    new Release(
                                            dl.owner(),
                                            dl.receipt(),
                                            dl.at().plus(Duration.ofHours(1)),
                                            dl.reason()));
                    if (done) {
                        reasons.put(id, dl.reason());
                    }
                    return done;
                }
            };
        }

        @Override
        protected Optional<String> deadLetterReason(String messageId) {
            return Optional.ofNullable(reasons.get(messageId));
        }
    }

    /** Enqueue is INSERT … ON CONFLICT DO NOTHING: a duplicate id is dropped silently. */
    static class IgnoresDuplicates extends BrokenStoreContract {
        @Override
        protected void enqueueCommitted(List<Message> messages) {
            InMemoryOutboxStore.Transaction tx = reference.begin();
            Set<String> inThisTransaction = new HashSet<>();
            for (Message m : messages) {
                if (reference.attempts(m.id()).isEmpty() && inThisTransaction.add(m.id())) {
                    reference.enqueue(tx, m);
                }
            }
            tx.commit();
        }
    }

    /** Forgets notBefore when it stores a message (but returns the original message on claim). */
    static class NotBeforeIgnored extends BrokenStoreContract {
        private final Map<String, Message> originals = new ConcurrentHashMap<>();

        @Override
        protected void enqueueCommitted(List<Message> messages) {
            messages.forEach(m -> originals.putIfAbsent(m.id(), m));
            reference.enqueueCommitted(
                    messages.stream()
                            .map(m -> m.toBuilder().notBefore(null).build())
                            .collect(Collectors.toList()));
        }

        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return changingMessages(store, m -> originals.getOrDefault(m.id(), m));
        }
    }

    // ------------------------------------------------------------------------------------------------
    // The verdicts
    // ------------------------------------------------------------------------------------------------

    private static final String LEASE_EXPIRY_SETUP = "must lease exactly the available message";

    /**
     * Runs the kit against {@code kit} and checks that exactly the rules in {@code expected} fail,
     * each with a message containing the given phrase, and that every other rule passes.
     */
    /**
     * Marks a rule whose failure depends on thread timing: it may pass, but if it fails it must say
     * this.
     */
    static final String TIMING_DEPENDENT = "timing-dependent: ";

    static void assertBreaksExactly(
            Class<? extends OutboxStoreContract> kit, Map<String, String> expected) {
        KitReport report = KitReport.of(kit);
        KitReport control = KitReport.of(NoDefect.class);
        String failures =
                report.failed().values().stream()
                        .map(o -> "\n  " + o.rule() + ": " + o.message())
                        .collect(Collectors.joining());
        Set<String> mustFail = new TreeSet<>();
        expected.forEach(
                (rule, phrase) -> {
                    if (!phrase.startsWith(TIMING_DEPENDENT)) {
                        mustFail.add(rule);
                    }
                });
        assertThat(report.failedContainers)
                .as("no rule group may fail as a whole for %s", kit.getSimpleName())
                .isZero();
        assertThat(report.failed().keySet())
                .as(
                        "%s must fail %s (and may fail %s), but the failures were:%s",
                        kit.getSimpleName(), mustFail, expected.keySet(), failures)
                .containsAll(mustFail)
                .isSubsetOf(expected.keySet());
        report.failed()
                .forEach(
                        (rule, outcome) ->
                                assertThat(outcome.message())
                                        .as(
                                                "the failure message of %s for %s must say what the store did wrong",
                                                rule, kit.getSimpleName())
                                        .contains(
                                                expected.get(rule).replace(TIMING_DEPENDENT, "")));
        Set<String> others = new TreeSet<>(control.outcomes.keySet());
        others.removeAll(report.failed().keySet());
        assertThat(report.passed().keySet())
                .as("every rule unrelated to the defect of %s must still pass", kit.getSimpleName())
                .containsExactlyInAnyOrderElementsOf(others);
        System.out.println("== " + kit.getSimpleName() + failures);
    }

    /**
     * One defect: what the store does wrong, the broken store, and each rule it must fail with a
     * phrase of the message.
     */
    private static Arguments defect(
            String does, Class<? extends OutboxStoreContract> kit, String... ruleThenPhrase) {
        Map<String, String> rules = new LinkedHashMap<>();
        for (int i = 0; i < ruleThenPhrase.length; i += 2) {
            rules.put(ruleThenPhrase[i], ruleThenPhrase[i + 1]);
        }
        return Arguments.of(does, kit, rules);
    }

    static Stream<Arguments> defects() {
        return Stream.of(
                defect(
                        "ignores the claim limit",
                        IgnoresTheLimit.class,
                        "required_claimHonoursTheLimit",
                        "claim(limit=2) with 5 message(s) available must lease exactly 2, but your store leased 3"),
                defect(
                        "hands a leased message to a second claimer",
                        SharesLiveLeases.class,
                        "required_claimedMessageIsInvisibleToOtherClaimers",
                        "must return nothing because owner tck-owner-a holds a live lease",
                        "required_concurrentClaimersNeverShareAMessage",
                        "still held a live lease on it",
                        // the completing race hands a message to a second claimer only when two
                        // claims overlap
                        "required_concurrentClaimCompleteAndReleaseLoseNothing",
                        TIMING_DEPENDENT + "still held a live lease on it"),
                defect(
                        "lists its deliveries newest first",
                        ListsNewestFirst.class,
                        "required_claimListsItsDeliveriesOldestFirst",
                        "claim must list its deliveries in order of availability, then of enqueue"),
                defect(
                        "never lets a lease expire",
                        LeaseNeverExpires.class,
                        "required_expiredLeaseMakesTheMessageClaimableAgain",
                        "must be claimable again (a relay that crashed",
                        "required_everyClaimCountsOneAttempt",
                        LEASE_EXPIRY_SETUP,
                        "required_staleReceiptCannotComplete",
                        LEASE_EXPIRY_SETUP,
                        "required_staleReceiptCannotRelease",
                        LEASE_EXPIRY_SETUP,
                        "required_staleReceiptCannotDeadLetter",
                        LEASE_EXPIRY_SETUP),
                defect(
                        "completes by message id, whatever the owner or receipt",
                        CompletesByMessageId.class,
                        "required_staleReceiptCannotComplete",
                        "must report that receipt stale and change nothing",
                        "required_completeWithAForeignOwnerOrUnknownReceiptChangesNothing",
                        "must report it stale (every write is a compare-and-set on owner and receipt)"),
                defect(
                        "releases by message id, whatever the owner or receipt",
                        ReleasesByMessageId.class,
                        "required_staleReceiptCannotRelease",
                        "must return false (stale), but your store returned true",
                        "required_releaseWithAForeignOwnerOrUnknownReceiptChangesNothing",
                        "must return false (stale), but your store returned true"),
                defect(
                        "ignores availableAt on release",
                        ReleaseIgnoresAvailableAt.class,
                        "required_releaseHidesTheMessageUntilAvailableAt",
                        "was released with availableAt="),
                defect(
                        "enqueues outside the caller's transaction",
                        RolledBackEnqueueVisible.class,
                        "required_rolledBackEnqueueIsNeverClaimable",
                        "in a transaction that rolled back"),
                defect(
                        "does not count attempts",
                        AttemptNotCounted.class,
                        "required_everyClaimCountsOneAttempt",
                        "must be attempt 2, but your store reported 1"),
                defect(
                        "keeps payloads as text",
                        PayloadStoredAsText.class,
                        "required_binaryPayloadRoundTripsByteForByte",
                        "payload was 4103 bytes when enqueued but came back as",
                        "optional_payloadOfTheDefaultLimitRoundTrips",
                        "payload was 1048576 bytes when enqueued"),
                defect(
                        "sorts headers",
                        HeadersSorted.class,
                        "required_headersRoundTripInOrder",
                        "headers came back in another order"),
                defect(
                        "retries dead-lettered messages later",
                        DeadLetterRetriesLater.class,
                        "required_deadLetteredMessageIsNeverClaimedAgain",
                        "was dead-lettered a day ago"),
                defect(
                        "drops duplicate ids silently",
                        IgnoresDuplicates.class,
                        "required_duplicateIdIsRejected",
                        "accepted it silently",
                        "required_duplicateIdWithinOneBatchIsRejected",
                        "accepted it silently",
                        "required_rejectedBatchLeavesNothingBehind",
                        "accepted it silently"),
                defect(
                        "forgets notBefore",
                        NotBeforeIgnored.class,
                        "required_delayedMessageIsNotClaimedBeforeNotBefore",
                        "10 minutes later",
                        "required_claimOrdersByAvailabilityThenEnqueueOrder",
                        "by availability (enqueue time"));
    }

    @Test
    @DisplayName(
            "the forwarding wrapper without a defect passes every rule (the harness itself is sound)")
    void noDefect_passesEveryRule() {
        KitReport report = KitReport.of(NoDefect.class);
        assertThat(report.failed()).as("failures of the defect-free wrapper").isEmpty();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.passed())
                .hasSizeGreaterThanOrEqualTo(ReferenceStoreKitTest.MINIMUM_RULES);
    }

    @ParameterizedTest(
            name = "a store that {0} fails exactly the rules about it, with a readable message")
    @MethodSource("defects")
    void eachDefectFailsExactlyItsRules(
            String does, Class<? extends OutboxStoreContract> kit, Map<String, String> rules) {
        assertBreaksExactly(kit, rules);
    }

    @Test
    @DisplayName("the table above covers every broken store declared in this class")
    void everyBrokenStoreIsChecked() {
        Set<Class<?>> checked =
                defects().map(a -> (Class<?>) a.get()[1]).collect(Collectors.toSet());
        Set<Class<?>> declared =
                Stream.of(BrokenStoresTest.class.getDeclaredClasses())
                        .filter(BrokenStoreContract.class::isAssignableFrom)
                        .filter(c -> c != NoDefect.class)
                        .collect(Collectors.toSet());
        assertThat(checked).containsExactlyInAnyOrderElementsOf(declared);
    }
}
