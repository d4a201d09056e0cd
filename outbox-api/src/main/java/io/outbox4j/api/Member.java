package io.outbox4j.api;

import java.time.Instant;

/**
 * A member of an outbox as the store records it ({@link OutboxMembership#members()}).
 *
 * @param id the member id (the owner its relay claims as)
 * @param leaseUntil when its membership ends without another renewal, by the store's clock
 * @param live whether that time is still ahead by the store's clock
 * @param buckets how many buckets it owns
 */
@Incubating
public record Member(String id, Instant leaseUntil, boolean live, int buckets) {
    /**
     * Validates.
     *
     * @param id the id
     * @param leaseUntil the lease end
     * @param live whether live
     * @param buckets the bucket count
     */
    public Member {
        Checks.text(id, "id", 255);
        Checks.notNull(leaseUntil, "leaseUntil");
        Checks.atLeast(buckets, 0, "buckets");
    }
}
