package io.outbox4j.api;

import java.util.List;
import java.util.Set;

/**
 * The dispatch side of a store: what a relay calls to lease, finish and retry messages. A store
 * also implements {@link Outbox} for its own transaction handle type, and {@link OutboxAdmin} for
 * operators.
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li>A message is <em>due</em> when it is not dead-lettered, not leased, and its availability
 *       time has come: its {@code notBefore} (or enqueue time), the end of its last lease, or the
 *       {@code availableAt} of its last release.
 *   <li><b>Per-key order.</b> A message without a key is claimable when it is due. A message with a
 *       key is claimable only when it is due and every earlier message of the same key (in enqueue
 *       order) that is still in the outbox is claimed <em>in the same claim, before it</em>. An
 *       earlier message that is leased (by anyone), waiting for its retry time or its {@code
 *       notBefore}, or dead-lettered blocks every later message of its key. (A store may offer an
 *       option under which dead letters do not block; by default they do, until the dead letter is
 *       replayed or discarded through {@link OutboxAdmin}.) Two claimers therefore never hold two
 *       messages of one key at once, and a key's messages are handed out strictly in enqueue order,
 *       across batches, relays, processes, retries and restarts.
 *   <li>A store may hand a key's next message out in the same claim as the one before it (the
 *       reference store and store-jdbi do), or leave it for a later claim; both keep the order.
 *   <li><b>Dead letters</b> block their key by default. A store may offer an option under which
 *       they do not (store-jdbi's and store-mongo's {@code deadLettersBlockTheirKey(false)}); every
 *       store instance over one table or collection must then be built alike: a blocking and a
 *       non-blocking store sharing a table would hand out messages behind a dead letter to one
 *       relay that the other holds back, and the order a reader sees would depend on which relay
 *       claimed.
 *   <li>{@link #claim} atomically leases claimable messages to one owner, in order of availability
 *       and then of enqueue, <b>as many as it can, up to {@code limit}</b>: without a concurrent
 *       claimer it returns {@code min(limit, claimable)} messages, whatever the limit (the kit
 *       checks limits above 100); concurrent claimers may each get fewer, and never receive the
 *       same message while its lease is live. Each claim issues a fresh receipt and counts one more
 *       attempt. A claim made as a member ({@link ClaimRequest#member()}, see {@link
 *       OutboxMembership}) takes keyed messages only of the member's buckets, and unkeyed messages
 *       of any.
 *   <li><b>Parking</b> is a store's own business: a store may set a blocked follower aside
 *       (store-jdbi and store-mongo park it, so a key's deep backlog does not slow claims of other
 *       keys) and bring it back when its key moves on, but nothing of that shows at this port. A
 *       follower becomes claimable exactly when every earlier message of its key is finished
 *       (completed, discarded, or replayed and claimed before it) and it is due; {@link
 *       OutboxAdmin} counts it by its availability (ready when due), parked or not.
 *   <li>{@link #abandon} gives leases back for messages that were never handed to a publisher: the
 *       attempt the claim counted is taken back and the message keeps its place (it is due again at
 *       once, ahead of messages enqueued after it).
 *   <li>{@link #extend} renews live leases; a relay renews the leases of its in-flight messages
 *       well before they end, so a short lease bounds crash recovery whatever the batch size.
 *   <li>Every write ({@link #complete}, {@link #release}, {@link #deadLetter}, {@link #extend},
 *       {@link #abandon}) is a compare-and-set on owner and receipt. A stale receipt (the lease
 *       expired and the message was claimed again, or it was already finished) or a foreign owner
 *       changes nothing and is reported as stale, never thrown.
 *   <li>Failures of the store itself (connection lost, timeout) are thrown as {@link
 *       StoreUnavailableException}s (unchecked {@link OutboxException}s).
 * </ul>
 *
 * <p>Implementations must be safe for use by several threads and several processes at once. The
 * {@code outbox-tck} module proves a store honours this contract.
 */
public interface OutboxStore {
    /**
     * Leases claimable messages, oldest available first, keeping per-key order.
     *
     * @param request who claims, at what time, for how long, and how many at most
     * @return the leased messages, at most {@code request.limit()}, possibly none, in the order
     *     they must be published per key
     */
    List<Delivery> claim(ClaimRequest request);

    /**
     * Removes published messages for good, in one write where the store can. Completing a keyed
     * message unblocks the next message of its key.
     *
     * @param completion the owner and the receipts of the published leases
     * @return the receipts that were stale (nothing was changed for them); empty when all were
     *     completed
     */
    Set<String> complete(Completion completion);

    /**
     * Clears a lease after a real delivery attempt and makes its message available again no earlier
     * than {@code availableAt}. The attempt stays counted; later messages of its key stay blocked
     * until it is finished.
     *
     * @param release the lease and when to retry
     * @return {@code true} if the lease was released, {@code false} if the receipt was stale
     */
    boolean release(Release release);

    /**
     * Parks a leased message for good; it is never claimed again by itself and the reason is kept.
     * By default it blocks the later messages of its key until it is replayed or discarded.
     *
     * @param deadLetter the lease and why it is given up
     * @return {@code true} if the message was dead-lettered, {@code false} if the receipt was stale
     */
    boolean deadLetter(DeadLetter deadLetter);

    /**
     * Moves the end of live leases to {@code extension.until()}, in one compare-and-set write where
     * the store can. A stale or foreign receipt extends nothing.
     *
     * @param extension the owner, the receipts and the new end of their leases
     * @return the receipts that were stale (nothing was changed for them)
     */
    Set<String> extend(Extension extension);

    /**
     * Gives back leases of messages that were never handed to a publisher (held back behind a
     * failed message of their key, not started before shutdown): the attempt their claim counted is
     * taken back, and each message is due again at once in its old place.
     *
     * @param abandonment the owner and the receipts of the untried leases
     * @return the receipts that were stale (nothing was changed for them)
     */
    Set<String> abandon(Abandonment abandonment);
}
