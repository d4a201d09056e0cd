package io.outbox4j.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

/**
 * The relay's clock moved into its store's frame (docs/scale-out.md, "Clocks"): every time the
 * relay sends a store (claim time, lease ends, retry times) is read from this clock. Each
 * membership renewal reports the store's clock; the offset between it and the relay's clock at the
 * middle of the renewal's round trip is added from then on, so a relay whose clock is skewed still
 * times its leases by the store's clock (within half a round trip). Until the first renewal, and
 * for a relay that is not a member, the offset is zero.
 */
final class StoreClock extends Clock {
    private final Clock base;
    private volatile Duration offset = Duration.ZERO;

    StoreClock(Clock base) {
        this.base = base;
    }

    /**
     * Takes the offset from one renewal.
     *
     * @param sent the relay clock's time when the renewal was sent
     * @param storeTime the store's clock during the renewal
     * @param received the relay clock's time when its answer came back
     */
    void sync(Instant sent, Instant storeTime, Instant received) {
        Instant middle = sent.plus(Duration.between(sent, received).dividedBy(2));
        offset = Duration.between(middle, storeTime);
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
