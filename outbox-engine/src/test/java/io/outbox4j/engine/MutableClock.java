package io.outbox4j.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock the test moves by hand, so leases expire without sleeping. */
final class MutableClock extends Clock {
    private final AtomicReference<Instant> now;

    /** Run (once) on the next call to {@link #instant()}, on the calling thread. */
    private final AtomicReference<Runnable> onNextInstant = new AtomicReference<>();

    MutableClock(Instant start) {
        this.now = new AtomicReference<>(start);
    }

    MutableClock() {
        this(Instant.parse("2030-01-01T00:00:00Z"));
    }

    void advance(Duration d) {
        now.updateAndGet(t -> t.plus(d));
    }

    void onNextInstant(Runnable action) {
        onNextInstant.set(action);
    }

    @Override
    public Instant instant() {
        Runnable action = onNextInstant.getAndSet(null);
        if (action != null) {
            action.run();
        }
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException();
    }
}
