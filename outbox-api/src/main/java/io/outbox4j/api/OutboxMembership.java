package io.outbox4j.api;

import java.time.Duration;
import java.util.List;

/**
 * Relays sharing one outbox: each is a <em>member</em> with a lease kept in the store, and the
 * {@value Buckets#COUNT} buckets of the key space are spread over the live members by {@link
 * Buckets#assign rendezvous hashing} (docs/scale-out.md). A claim made {@link ClaimRequest#member()
 * as a member} takes keyed messages only of the buckets the store assigns to its owner, so relays
 * never walk over keys another relay is publishing, and claims of different members do not wait for
 * each other.
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li><b>The store's clock decides.</b> Member leases are started and judged by the store's own
 *       clock (the database's), never the relay's: a relay whose clock is skewed, or that was
 *       paused past its lease, cannot keep buckets it lost.
 *   <li>{@link #renew} starts or renews the caller's membership, drops members whose lease has
 *       ended, and writes the rendezvous assignment over the live members, in one atomic step: a
 *       joining member takes its buckets at once, and the buckets of a member whose lease ended go
 *       to the live members at the first renewal after it ended.
 *   <li>A claim as a member checks ownership <em>inside</em> the claim, by the store's clock: keyed
 *       messages of a bucket are claimed only by the bucket's owner while that owner's member lease
 *       lasts. A member without a live lease claims only unkeyed messages.
 *   <li><b>Message leases by the store's clock too.</b> A claim as a member is timed by the store's
 *       clock, not by {@link ClaimRequest#now()}: which messages are due, whether a lease has
 *       ended, and the end of the leases it grants ({@code store's now + lease}) are all judged
 *       inside the claim by the store's own clock. A relay whose clock is skewed, or whose claim
 *       waited for a connection, neither takes over a live lease early nor grants one that is over
 *       before it starts. (A relay times renewals and retries in the store's frame by moving its
 *       own clock by the offset it reads from {@link Membership#storeTime()}; the engine's relay
 *       and the Kafka Connect tasks do.)
 *   <li>{@link #leave} ends the membership at once and hands its buckets to the remaining live
 *       members in the same step.
 *   <li>Ownership is about throughput, not correctness: per-key order stays the {@link
 *       OutboxStore}'s guarantee whoever claims. Two members that briefly both act on one bucket (a
 *       handover racing a claim) may each lease messages of it only as the predecessor rule allows,
 *       so a key is never published out of order.
 * </ul>
 *
 * <p>The {@code outbox-tck} module's {@code OutboxMembershipContract} proves a store honours this.
 */
@Incubating
public interface OutboxMembership {
    /** The shortest member lease a store accepts. */
    Duration MIN_LEASE = Duration.ofMillis(100);

    /** The longest member lease a store accepts. */
    Duration MAX_LEASE = Duration.ofHours(1);

    /**
     * Joins the outbox, or renews the membership, until the store's now plus {@code lease}; drops
     * members whose lease has ended and assigns every bucket to a live member.
     *
     * @param member the member id: the owner the relay claims as (at most 255 characters)
     * @param lease how long the membership lasts without another renewal ({@link #MIN_LEASE} to
     *     {@link #MAX_LEASE})
     * @return what the member owns after this renewal
     * @throws IllegalArgumentException if the member id or the lease is out of range
     */
    Membership renew(String member, Duration lease);

    /**
     * Leaves the outbox at once: the membership ends and its buckets go to the remaining live
     * members. Leaving as a member that is not one changes nothing.
     *
     * @param member the member id
     */
    void leave(String member);

    /**
     * Lists the members the store knows, live or not yet dropped, with how many buckets each owns.
     *
     * @return the members ordered by id
     */
    List<Member> members();

    /**
     * Checks a member id and a member lease; for stores.
     *
     * @param member the member id
     * @param lease the lease
     * @throws IllegalArgumentException if either is missing or out of range
     */
    static void check(String member, Duration lease) {
        Checks.text(member, "member", 255);
        Checks.positive(lease, "lease");
        if (lease.compareTo(MIN_LEASE) < 0 || lease.compareTo(MAX_LEASE) > 0) {
            throw new IllegalArgumentException(
                    "lease must be between "
                            + MIN_LEASE
                            + " and "
                            + MAX_LEASE
                            + ", but was "
                            + lease);
        }
    }
}
