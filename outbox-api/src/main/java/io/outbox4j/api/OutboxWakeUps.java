package io.outbox4j.api;

/**
 * Optional port of a store that can tell a relay, in any process, that messages were committed
 * (docs/relay.md, "Cross-process wake-up"): a relay that {@link #listen listens} claims at once
 * instead of at the end of its poll interval. The engine's relay listens whenever its store
 * implements this, with no configuration; a store that does not implement it is polled.
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li><b>A hint, never a delivery.</b> Messages are still found by claiming: a wake-up may come
 *       when nothing is claimable (spurious), several commits may give one wake-up (coalesced), and
 *       a wake-up may be lost (a dropped connection). A lost one costs the relay at most its poll
 *       interval, never a message.
 *   <li><b>Committed, not enqueued.</b> A store signals after the transaction that enqueued became
 *       visible to claims, or, where it cannot know when that is, repeatedly for a short while
 *       after the enqueue; never only before the commit.
 *   <li><b>Keeps listening.</b> A listener whose connection to the store drops reconnects by
 *       itself, and calls {@code wakeUp} once it listens again (commits made while it was deaf are
 *       then claimed at once).
 *   <li>{@code wakeUp} runs on a thread of the store's; it must be cheap and must not block (the
 *       engine's {@code Relay.wakeUp()} is). An exception it throws is the listener's to log, not
 *       to die of.
 * </ul>
 *
 * <p>The {@code outbox-tck} reference store implements it in-process; the {@code outbox-tck}
 * module's {@code OutboxWakeUpsContract} proves a store honours it.
 */
@Incubating
public interface OutboxWakeUps {
    /**
     * Starts listening for commits of messages to this outbox, by any process.
     *
     * @param wakeUp called (on a thread of the store's) when messages may have been committed
     * @return stops listening when closed; closing it twice does nothing. Once {@code close()}
     *     returned, {@code wakeUp} is not called again (a call already running may finish).
     * @throws IllegalArgumentException if {@code wakeUp} is null
     */
    Listening listen(Runnable wakeUp);

    /** A running listener: closing it stops it. */
    interface Listening extends AutoCloseable {
        /** Stops listening and frees what the listener holds (a connection, a thread). */
        @Override
        void close();
    }
}
