package io.outbox4j.engine;

import io.outbox4j.api.StoreClockOffset;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

/**
 * The relay's clock moved into its store's frame (docs/scale-out.md, "Clocks"): every time the
 * relay sends a store (claim time, lease ends, retry times) is read from this clock. Each
 * membership renewal reports the store's clock; the offset between it and the relay's clock at the
 * middle of the renewal's round trip is added from then on, so a relay whose clock is skewed still
 * times its renewals and retries by the store's clock (within half a round trip; the store times a
 * member's claims itself). The estimate, with its filter of slow renewals, is the API's {@link
 * StoreClockOffset}, shared with the Kafka Connect task. Until the first renewal, and for a relay
 * that is not a member, the offset is zero.
 */
final class StoreClock extends Clock {
    private final Clock base;
    private final StoreClockOffset offset = new StoreClockOffset();

    StoreClock(Clock base) {
        this.base = base;
    }

    /**
     * Takes the offset from one renewal, unless its round trip was slow and slower than the one in
     * use ({@link StoreClockOffset#sync}).
     *
     * @param sent the relay clock's time when the renewal was sent
     * @param storeTime the store's clock during the renewal
     * @param received the relay clock's time when its answer came back
     */
    void sync(Instant sent, Instant storeTime, Instant received) {
        offset.sync(sent, storeTime, received);
    }

    /** How far the store's clock is ahead of the relay's (negative: behind). */
    Duration offset() {
        return offset.get();
    }

    /** The relay's own clock. */
    Clock base() {
        return base;
    }

    @Override
    public Instant instant() {
        return offset.toStoreTime(base.instant());
    }

    @Override
    public ZoneId getZone() {
        return base.getZone();
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return Clock.offset(base.withZone(zone), offset.get());
    }
}
