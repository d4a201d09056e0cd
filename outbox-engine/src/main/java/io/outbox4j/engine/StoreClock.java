package io.outbox4j.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;

/**
 * The relay's clock moved into its store's frame (docs/scale-out.md, "Clocks"): every time the
 * relay sends a store (claim time, lease ends, retry times) is read from this clock. Each
 * membership renewal reports the store's clock; the offset between it and the relay's clock at the
 * middle of the renewal's round trip is added from then on, so a relay whose clock is skewed still
 * times its renewals and retries by the store's clock (within half a round trip; the store times a
 * member's claims itself). Until the first renewal, and for a relay that is not a member, the
 * offset is zero.
 */
final class StoreClock extends Clock {
    /**
     * A renewal that came back within this is always taken; a slower one only when it is faster
     * than the one in use (the store's time lies somewhere in the round trip: a renewal that waited
     * 27 s for a pool connection would put the offset 13 s off).
     */
    static final Duration GOOD_ROUND_TRIP = Duration.ofMillis(500);

    private final Clock base;
    private volatile Duration offset = Duration.ZERO;
    private Duration roundTrip = ChronoUnit.FOREVER.getDuration();

    StoreClock(Clock base) {
        this.base = base;
    }

    /**
     * Takes the offset from one renewal, unless its round trip was slow and slower than the one in
     * use.
     *
     * @param sent the relay clock's time when the renewal was sent
     * @param storeTime the store's clock during the renewal
     * @param received the relay clock's time when its answer came back
     */
    synchronized void sync(Instant sent, Instant storeTime, Instant received) {
        Duration trip = Duration.between(sent, received);
        if (trip.compareTo(GOOD_ROUND_TRIP) > 0 && trip.compareTo(roundTrip) >= 0) {
            return;
        }
        roundTrip = trip;
        offset = Duration.between(sent.plus(trip.dividedBy(2)), storeTime);
    }

    /** How far the store's clock is ahead of the relay's (negative: behind). */
    Duration offset() {
        return offset;
    }

    /** The relay's own clock. */
    Clock base() {
        return base;
    }

    @Override
    public Instant instant() {
        return base.instant().plus(offset);
    }

    @Override
    public ZoneId getZone() {
        return base.getZone();
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return Clock.offset(base.withZone(zone), offset);
    }
}
