package io.outbox4j.api;

import java.time.Duration;
import java.time.Instant;

/**
 * Asks a store to lease up to {@code limit} available messages for {@code owner} until {@code now +
 * lease}.
 *
 * @param owner the claiming relay's identity; every later write must name the same owner
 * @param now the current time by the relay's clock; stores use it, never their own clock, for every
 *     lease decision of a claim not made as a member. A claim as a member is timed by the store's
 *     own clock instead ({@link OutboxMembership}), so a skewed or stale {@code now} cannot shorten
 *     or take over a lease
 * @param lease how long the claimed messages stay invisible to other claimers
 * @param limit the maximum number of messages to claim, 1 to {@value #MAX_LIMIT}
 * @param member whether the owner claims as a member of the outbox ({@link OutboxMembership}):
 *     keyed messages are then taken only from the buckets the store assigns to the owner, judged by
 *     the store's clock inside the claim, and none at all when the owner's membership has lapsed;
 *     unkeyed messages are taken either way; refused when {@code now} is off the store's clock.
 *     {@code false} claims from every bucket, as a single relay or a store without membership does.
 */
public record ClaimRequest(String owner, Instant now, Duration lease, int limit, boolean member) {
    /** The largest batch a single claim may ask for. */
    public static final int MAX_LIMIT = 10_000;

    /**
     * Validates the request.
     *
     * @param owner the owner
     * @param now the now
     * @param lease the lease
     * @param limit the limit
     * @param member whether the owner claims as a member
     * @throws IllegalArgumentException if a field is missing or out of range
     */
    public ClaimRequest {
        Checks.text(owner, "owner", 255);
        Checks.notNull(now, "now");
        Checks.positive(lease, "lease");
        Checks.atLeast(limit, 1, "limit");
        if (limit > MAX_LIMIT) {
            throw new IllegalArgumentException(
                    "limit must be <= " + MAX_LIMIT + ", but was " + limit);
        }
    }

    /**
     * A claim from every bucket (not as a member).
     *
     * @param owner the owner
     * @param now the now
     * @param lease the lease
     * @param limit the limit
     * @throws IllegalArgumentException if a field is missing or out of range
     */
    public ClaimRequest(String owner, Instant now, Duration lease, int limit) {
        this(owner, now, lease, limit, false);
    }

    /**
     * Returns the instant the lease ends.
     *
     * @return {@code now + lease}
     */
    public Instant leaseUntil() {
        return now.plus(lease);
    }
}
