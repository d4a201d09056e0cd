package io.outbox4j.tck;

import static io.outbox4j.tck.KitReport.defect;

import io.outbox4j.api.Abandonment;
import io.outbox4j.api.Buckets;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Member;
import io.outbox4j.api.Membership;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The membership kit against the reference store wrapped in one deliberate defect at a time: each
 * run must fail exactly the rules about that defect, saying what the store did wrong, while every
 * other rule passes. The broken stores are static nested classes, never run directly by surefire.
 */
class BrokenMembershipsTest {

    /** Forwards both ports to the reference store; a defect overrides one method. */
    static class ForwardingMembership implements OutboxMembership {
        final InMemoryOutboxStore reference;
        final ForwardingStore store;

        ForwardingMembership(InMemoryOutboxStore reference) {
            this.reference = reference;
            ForwardingMembership self = this;
            this.store =
                    new ForwardingStore(reference) {
                        @Override
                        public synchronized List<Delivery> claim(ClaimRequest request) {
                            return self.claim(request);
                        }
                    };
        }

        List<Delivery> claim(ClaimRequest request) {
            return reference.claim(request);
        }

        @Override
        public Membership renew(String member, Duration lease) {
            return reference.renew(member, lease);
        }

        @Override
        public void leave(String member) {
            reference.leave(member);
        }

        @Override
        public List<Member> members() {
            return reference.members();
        }
    }

    /** The kit over one wrapped reference store. */
    abstract static class BrokenMembershipContract extends OutboxMembershipContract {
        final InMemoryOutboxStore reference = new InMemoryOutboxStore();
        private ForwardingMembership broken;

        abstract ForwardingMembership breakIt(InMemoryOutboxStore reference);

        private ForwardingMembership broken() {
            if (broken == null) {
                broken = breakIt(reference);
            }
            return broken;
        }

        @Override
        protected OutboxStore store() {
            return new Both(broken());
        }

        @Override
        protected void resetStore() {
            reference.clear();
        }

        @Override
        protected void enqueueCommitted(List<Message> messages) {
            reference.enqueueCommitted(messages);
        }
    }

    /** The two ports of a broken store as one object, as the kit expects. */
    static final class Both extends ForwardingStore implements OutboxMembership {
        private final ForwardingMembership m;

        Both(ForwardingMembership m) {
            super(m.store);
            this.m = m;
        }

        @Override
        public Membership renew(String member, Duration lease) {
            return m.renew(member, lease);
        }

        @Override
        public void leave(String member) {
            m.leave(member);
        }

        @Override
        public List<Member> members() {
            return m.members();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // The broken stores, one defect each
    // ------------------------------------------------------------------------------------------------

    /** Control: the forwarding wrapper with no defect must pass every rule. */
    static class NoDefect extends BrokenMembershipContract {
        @Override
        ForwardingMembership breakIt(InMemoryOutboxStore reference) {
            return new ForwardingMembership(reference);
        }
    }

    /** Claims every bucket even when asked to claim as a member. */
    static class IgnoresOwnership extends BrokenMembershipContract {
        @Override
        ForwardingMembership breakIt(InMemoryOutboxStore reference) {
            return new ForwardingMembership(reference) {
                @Override
                List<Delivery> claim(ClaimRequest r) {
                    return reference.claim(
                            new ClaimRequest(r.owner(), r.now(), r.lease(), r.limit(), false));
                }
            };
        }
    }

    /**
     * Judges a membership by the claimer's clock: the buckets of a member's last renewal stay its
     * own while its lease has not ended by the claim's {@code now}.
     */
    static class JudgesMembershipByTheClaimersClock extends BrokenMembershipContract {
        @Override
        ForwardingMembership breakIt(InMemoryOutboxStore reference) {
            return new ForwardingMembership(reference) {
                private final Map<String, Membership> last = new HashMap<>();

                @Override
                public synchronized Membership renew(String member, Duration lease) {
                    Membership m = reference.renew(member, lease);
                    last.put(member, m);
                    return m;
                }

                @Override
                public synchronized void leave(String member) {
                    last.remove(member);
                    reference.leave(member);
                }

                @Override
                synchronized List<Delivery> claim(ClaimRequest r) {
                    Membership m = last.get(r.owner());
                    if (!r.member() || m == null || !m.leaseUntil().isAfter(r.now())) {
                        return reference.claim(r);
                    }
                    Set<Integer> mine = new TreeSet<>(m.buckets());
                    List<Delivery> all =
                            reference.claim(
                                    new ClaimRequest(
                                            r.owner(), r.now(), r.lease(), r.limit(), false));
                    List<Delivery> kept = new ArrayList<>();
                    List<String> back = new ArrayList<>();
                    for (Delivery d : all) {
                        boolean owned =
                                d.message()
                                        .key()
                                        .map(k -> mine.contains(Buckets.of(k)))
                                        .orElse(true);
                        if (owned) {
                            kept.add(d);
                        } else {
                            back.add(d.receipt());
                        }
                    }
                    if (!back.isEmpty()) {
                        reference.abandon(new Abandonment(r.owner(), back));
                    }
                    return kept;
                }
            };
        }
    }

    /** Leaving does nothing: the member keeps its buckets until its lease ends. */
    static class LeaveKeepsTheBuckets extends BrokenMembershipContract {
        @Override
        ForwardingMembership breakIt(InMemoryOutboxStore reference) {
            return new ForwardingMembership(reference) {
                @Override
                public void leave(String member) {}
            };
        }
    }

    /** Reports buckets spread round-robin over the members instead of by rendezvous hashing. */
    static class ReportsRoundRobinBuckets extends BrokenMembershipContract {
        @Override
        ForwardingMembership breakIt(InMemoryOutboxStore reference) {
            return new ForwardingMembership(reference) {
                @Override
                public Membership renew(String member, Duration lease) {
                    Membership m = reference.renew(member, lease);
                    List<Integer> mine = new ArrayList<>();
                    int index = m.members().indexOf(member);
                    for (int b = index; b < Buckets.COUNT; b += m.members().size()) {
                        mine.add(b);
                    }
                    return new Membership(
                            member,
                            mine,
                            m.members(),
                            m.leaseUntil(),
                            m.storeTime(),
                            m.handedOver());
                }
            };
        }
    }

    /** Times a member's claims by the member's {@code now}, not by the store's clock. */
    static class TrustsMembersClocks extends BrokenMembershipContract {
        @Override
        ForwardingMembership breakIt(InMemoryOutboxStore reference) {
            InMemoryOutboxStore trusting = reference.trustingMembersClocks();
            return new ForwardingMembership(reference) {
                @Override
                List<Delivery> claim(ClaimRequest r) {
                    return trusting.claim(r);
                }
            };
        }
    }

    /** Renews without dropping lapsed members: they keep their buckets for good. */
    static class NeverDropsLapsedMembers extends BrokenMembershipContract {
        @Override
        ForwardingMembership breakIt(InMemoryOutboxStore reference) {
            return new ForwardingMembership(reference) {
                @Override
                public synchronized Membership renew(String member, Duration lease) {
                    // keeps every other member alive as long as anyone renews
                    for (Member m : reference.members()) {
                        if (!m.id().equals(member)) {
                            reference.renew(m.id(), Duration.ofMinutes(5));
                        }
                    }
                    return reference.renew(member, lease);
                }
            };
        }
    }

    // ------------------------------------------------------------------------------------------------
    // The checks
    // ------------------------------------------------------------------------------------------------

    static Stream<Arguments> defects() {
        return Stream.of(
                defect(
                        "claims every bucket as a member",
                        IgnoresOwnership.class,
                        "required_claimAsMemberTakesOnlyItsBuckets",
                        "buckets of the keyed messages claimed by member A",
                        "required_unknownMemberClaimsNoKeyedMessage",
                        "keyed messages claimed by a non-member",
                        "required_lapsedMemberClaimsNoKeyedMessageWhateverItsClock",
                        "judged by the store's clock",
                        "required_leaveHandsBucketsOverAtOnce",
                        "A left: it claims no keyed message",
                        "required_memberClaimsAreTimedByTheStoresClock",
                        "by the store's clock, which times every lease"),
                defect(
                        "judges membership by the claimer's clock",
                        JudgesMembershipByTheClaimersClock.class,
                        "required_lapsedMemberClaimsNoKeyedMessageWhateverItsClock",
                        "judged by the store's clock",
                        "required_leaveHandsBucketsOverAtOnce",
                        "B owns every bucket the moment A has left",
                        "required_memberClaimsAreTimedByTheStoresClock",
                        "by the store's clock, which times every lease"),
                defect(
                        "times members' leases by their own clocks",
                        TrustsMembersClocks.class,
                        "required_memberClaimsAreTimedByTheStoresClock",
                        "by the store's clock, which times every lease"),
                defect(
                        "keeps a leaving member's buckets",
                        LeaveKeepsTheBuckets.class,
                        "required_leaveHandsBucketsOverAtOnce",
                        "members after A left"),
                defect(
                        "spreads buckets round-robin",
                        ReportsRoundRobinBuckets.class,
                        "required_bucketsAreSpreadByRendezvousHashing",
                        "must be Buckets.assign's",
                        "required_aJoinMovesOnlyTheJoinersShare",
                        "the joiner's buckets right after its first renewal",
                        "required_claimAsMemberTakesOnlyItsBuckets",
                        "buckets of the keyed messages claimed by member",
                        "required_lapsedMembersBucketsMoveAtTheNextRenewal",
                        "A coming back takes its rendezvous share again"),
                defect(
                        "keeps lapsed members",
                        NeverDropsLapsedMembers.class,
                        "required_lapsedMembersBucketsMoveAtTheNextRenewal",
                        "B's next renewal must give B every bucket"));
    }

    @Test
    @DisplayName("the forwarding wrapper without a defect passes every membership rule")
    void controlPassesEveryRule() {
        KitReport.of(NoDefect.class)
                .assertEveryRulePasses(
                        "membership (defect-free wrapper)",
                        ReferenceKitsTest.Kit.MEMBERSHIP.minimumRules);
    }

    @ParameterizedTest(name = "a store that {0} fails exactly its rules")
    @MethodSource("defects")
    void eachDefectFailsExactlyItsRules(
            String does,
            Class<? extends OutboxMembershipContract> kit,
            Map<String, String> expected) {
        BrokenStoresTest.assertBreaksExactly(kit, NoDefect.class, expected);
    }
}
