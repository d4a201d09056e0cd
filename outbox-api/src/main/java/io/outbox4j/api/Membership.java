package io.outbox4j.api;

import java.time.Instant;
import java.util.List;

/**
 * What one renewal of a membership found ({@link OutboxMembership#renew}).
 *
 * @param member the member id
 * @param buckets the buckets the member owns, ascending
 * @param members the live members, the renewing one included, ordered by id
 * @param leaseUntil when the membership ends without another renewal, by the store's clock
 * @param storeTime the store's clock at the renewal (a relay may compare it with its own)
 * @param handedOver how many buckets changed owner in this renewal (joins, leaves, expiries)
 */
@Incubating
public record Membership(
        String member,
        List<Integer> buckets,
        List<String> members,
        Instant leaseUntil,
        Instant storeTime,
        int handedOver) {
    /**
     * Validates and copies.
     *
     * @param member the member
     * @param buckets the buckets
     * @param members the members
     * @param leaseUntil the lease end
     * @param storeTime the store time
     * @param handedOver the buckets handed over
     */
    public Membership {
        Checks.text(member, "member", 255);
        buckets = List.copyOf(Checks.notNull(buckets, "buckets"));
        members = List.copyOf(Checks.notNull(members, "members"));
        Checks.notNull(leaseUntil, "leaseUntil");
        Checks.notNull(storeTime, "storeTime");
        Checks.atLeast(handedOver, 0, "handedOver");
    }
}
