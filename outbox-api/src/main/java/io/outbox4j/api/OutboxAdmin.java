package io.outbox4j.api;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The operator's side of a store: how big the backlog is, which messages were given up and why, and
 * putting them back or throwing them away. Every store implements it; the {@code outbox-tck} module
 * proves it.
 *
 * <p>Every operation works on committed data only and may run while relays are claiming. A replay
 * or discard never touches a leased or waiting message: only dead letters.
 */
public interface OutboxAdmin {
    /**
     * Counts the outbox by state at {@code now}, in total and per topic.
     *
     * @param now the time the states are judged at (due, leased, waiting)
     * @return the counts
     */
    OutboxStatistics statistics(Instant now);

    /**
     * Lists dead letters page by page, oldest dead-letter time first (ties by enqueue order).
     *
     * @param query the filter, page size and where the previous page ended
     * @return one page and, if there may be more, the cursor of the next one
     */
    DeadLetterPage deadLetters(DeadLetterQuery query);

    /**
     * Makes dead letters due again at {@code now}: attempts reset to zero, reason and time cleared,
     * and their keys unblocked. Ids that are unknown or not dead are ignored.
     *
     * @param ids the message ids (at most {@value DeadLetterQuery#MAX_LIMIT})
     * @param now when they become due
     * @return how many were replayed
     */
    int replay(List<String> ids, Instant now);

    /**
     * Replays every dead letter the query's filter selects (its page size and cursor are ignored).
     *
     * @param filter which dead letters (topic, time range)
     * @param now when they become due
     * @return how many were replayed
     */
    int replayAll(DeadLetterQuery filter, Instant now);

    /**
     * Deletes dead letters for good, which unblocks their keys. Ids that are unknown or not dead
     * are ignored.
     *
     * @param ids the message ids (at most {@value DeadLetterQuery#MAX_LIMIT})
     * @return how many were discarded
     */
    int discard(List<String> ids);

    /**
     * Deletes every dead letter the query's filter selects (its page size and cursor are ignored).
     *
     * @param filter which dead letters (topic, time range)
     * @return how many were discarded
     */
    int discardAll(DeadLetterQuery filter);

    /**
     * The error of the last release of a message (a failed try that is waiting for its retry), or
     * the reason it was dead-lettered.
     *
     * @param id the message id
     * @return the last error, empty when the message is unknown or never failed
     */
    Optional<String> lastError(String id);
}
