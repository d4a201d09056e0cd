package io.outbox4j.api;

import java.time.Duration;
import java.time.Instant;

/**
 * How far a store's clock is ahead of a member's (negative: behind), estimated from membership
 * renewals (docs/scale-out.md, "Clocks"): a member that sends a store times (lease ends, retry
 * times) adds it to its own clock. Each renewal reports the store's clock ({@link
 * Membership#storeTime()}), which lies somewhere in the renewal's round trip; the estimate takes
 * its middle. A renewal that came back within {@link #GOOD_ROUND_TRIP} is always taken; a slower
 * one only when it is faster than the one in use (a renewal that waited 27 s for a pool connection
 * would put the offset 13 s off). Zero until the first renewal.
 *
 * <p>Used by the engine's relay and the Kafka Connect task; a hand-written relay loop on the ports
 * can use it the same way. Thread-safe.
 */
@Incubating
public final class StoreClockOffset {
    /** A renewal whose round trip is at most this long is always taken. */
    public static final Duration GOOD_ROUND_TRIP = Duration.ofMillis(500);

    private volatile Duration offset = Duration.ZERO;
    private Duration roundTrip = Duration.ofSeconds(Long.MAX_VALUE);

    /** An offset of zero until the first renewal. */
    public StoreClockOffset() {}

    /**
     * Takes the offset from one renewal, unless its round trip was slower than {@link
     * #GOOD_ROUND_TRIP} and than the one in use.
     *
     * @param sent the member's clock when the renewal was sent
     * @param storeTime the store's clock during the renewal ({@link Membership#storeTime()})
     * @param received the member's clock when its answer came back
     * @return whether this renewal's offset was taken
     * @throws IllegalArgumentException if an argument is null or {@code received} is before {@code
     *     sent}
     */
    public synchronized boolean sync(Instant sent, Instant storeTime, Instant received) {
        Checks.notNull(sent, "sent");
        Checks.notNull(storeTime, "storeTime");
        Checks.notNull(received, "received");
        Duration trip = Duration.between(sent, received);
        if (trip.isNegative()) {
            throw new IllegalArgumentException(
                    "received must not be before sent, but was " + received + " < " + sent);
        }
        if (trip.compareTo(GOOD_ROUND_TRIP) > 0 && trip.compareTo(roundTrip) >= 0) {
            return false;
        }
        roundTrip = trip;
        offset = Duration.between(sent.plus(trip.dividedBy(2)), storeTime);
        return true;
    }

    /**
     * The offset now.
     *
     * @return how far the store's clock is ahead of the member's (negative: behind)
     */
    public Duration get() {
        return offset;
    }

    /**
     * A time of the member's clock moved into the store's frame.
     *
     * @param memberTime a time read from the member's clock
     * @return that time plus the offset
     */
    public Instant toStoreTime(Instant memberTime) {
        return memberTime.plus(offset);
    }

    @Override
    public String toString() {
        return "StoreClockOffset[" + offset + "]";
    }
}
