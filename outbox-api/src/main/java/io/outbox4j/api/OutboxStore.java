package io.outbox4j.api;

import java.util.List;
import java.util.Set;

/**
 * The dispatch side of a store: what a relay calls to lease, finish and retry messages. A store
 * also implements {@link Outbox} for its own transaction handle type.
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li>A message is <em>available</em> when it is not dead-lettered and its availability time has
 *       come: its {@code notBefore} (or enqueue time), the end of its last lease, or the {@code
 *       availableAt} of its last release.
 *   <li>{@link #claim} atomically leases up to {@code limit} available messages to one owner, in
 *       order of availability and then of enqueue; concurrent claimers never receive the same
 *       message while its lease is live. Each claim issues a fresh receipt and counts one more
 *       attempt.
 *   <li>Every write ({@link #complete}, {@link #release}, {@link #deadLetter}) is a compare-and-set
 *       on owner and receipt. A stale receipt (the lease expired and the message was claimed again,
 *       or it was already finished) or a foreign owner changes nothing and is reported as stale,
 *       never thrown.
 *   <li>Failures of the store itself (connection lost, timeout) are thrown as unchecked exceptions.
 * </ul>
 *
 * <p>Implementations must be safe for use by several threads and several processes at once. The
 * {@code outbox-tck} module proves a store honours this contract.
 */
public interface OutboxStore {
    /**
     * Leases available messages, oldest available first.
     *
     * @param request who claims, at what time, for how long, and how many at most
     * @return the leased messages, at most {@code request.limit()}, possibly none
     */
    List<Delivery> claim(ClaimRequest request);

    /**
     * Removes published messages for good, in one write where the store can.
     *
     * @param completion the owner and the receipts of the published leases
     * @return the receipts that were stale (nothing was changed for them); empty when all were
     *     completed
     */
    Set<String> complete(Completion completion);

    /**
     * Clears a lease and makes its message available again no earlier than {@code availableAt}.
     *
     * @param release the lease and when to retry
     * @return {@code true} if the lease was released, {@code false} if the receipt was stale
     */
    boolean release(Release release);

    /**
     * Parks a leased message for good; it is never claimed again and the reason is kept.
     *
     * @param deadLetter the lease and why it is given up
     * @return {@code true} if the message was dead-lettered, {@code false} if the receipt was stale
     */
    boolean deadLetter(DeadLetter deadLetter);
}
