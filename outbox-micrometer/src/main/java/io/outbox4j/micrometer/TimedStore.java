package io.outbox4j.micrometer;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.outbox4j.api.Abandonment;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Completion;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.Extension;
import io.outbox4j.api.Membership;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.api.OutboxStore;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.api.Release;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * An {@link OutboxStore} that times every port call of the store it wraps ({@value
 * OutboxMetrics#STORE_CALLS}) and counts the messages each call carried ({@value
 * OutboxMetrics#STORE_MESSAGES}); answers and exceptions pass through unchanged.
 */
class TimedStore implements OutboxStore {

    /**
     * A timed store over {@code store} with the same optional ports: membership and wake-up calls
     * pass through, untimed, so a relay built on it still joins its outbox as a member and still
     * hears commits of other processes.
     */
    static TimedStore over(OutboxStore store, Map<Operation, Meters> meters) {
        boolean member = store instanceof OutboxMembership;
        boolean wakes = store instanceof OutboxWakeUps;
        if (member && wakes) {
            return new MemberHearing(store, meters);
        }
        if (member) {
            return new Member(store, meters);
        }
        return wakes ? new Hearing(store, meters) : new TimedStore(store, meters);
    }

    /** Membership calls to the wrapped store, untimed. */
    interface PassesMembership extends OutboxMembership {
        OutboxStore delegate();

        @Override
        default Membership renew(String member, Duration lease) {
            return ((OutboxMembership) delegate()).renew(member, lease);
        }

        @Override
        default void leave(String member) {
            ((OutboxMembership) delegate()).leave(member);
        }

        @Override
        default List<io.outbox4j.api.Member> members() {
            return ((OutboxMembership) delegate()).members();
        }
    }

    /** Wake-up listening on the wrapped store. */
    interface PassesWakeUps extends OutboxWakeUps {
        OutboxStore delegate();

        @Override
        default Listening listen(Runnable wakeUp) {
            return ((OutboxWakeUps) delegate()).listen(wakeUp);
        }
    }

    private static final class Member extends TimedStore implements PassesMembership {
        Member(OutboxStore store, Map<Operation, Meters> meters) {
            super(store, meters);
        }
    }

    private static final class Hearing extends TimedStore implements PassesWakeUps {
        Hearing(OutboxStore store, Map<Operation, Meters> meters) {
            super(store, meters);
        }
    }

    private static final class MemberHearing extends TimedStore
            implements PassesMembership, PassesWakeUps {
        MemberHearing(OutboxStore store, Map<Operation, Meters> meters) {
            super(store, meters);
        }
    }

    /** The port operations, in the order of their meters; the tag is the lower-case name. */
    enum Operation {
        CLAIM("claim"),
        COMPLETE("complete"),
        RELEASE("release"),
        DEAD_LETTER("dead_letter"),
        EXTEND("extend"),
        ABANDON("abandon");

        final String tag;

        Operation(String tag) {
            this.tag = tag;
        }
    }

    /** The meters of one operation. */
    record Meters(Timer ok, Timer error, DistributionSummary messages) {}

    private final OutboxStore store;

    /** The meters of every operation. */
    private final EnumMap<Operation, Meters> meters;

    TimedStore(OutboxStore store, Map<Operation, Meters> meters) {
        this.store = store;
        this.meters = new EnumMap<>(meters);
        if (this.meters.size() != Operation.values().length) {
            throw new IllegalArgumentException("every operation needs its meters");
        }
    }

    /** The store this one times. */
    public OutboxStore delegate() {
        return store;
    }

    @Override
    public List<Delivery> claim(ClaimRequest request) {
        return time(Operation.CLAIM, () -> store.claim(request), List::size);
    }

    @Override
    public Set<String> complete(Completion completion) {
        return time(
                Operation.COMPLETE,
                () -> store.complete(completion),
                r -> completion.receipts().size());
    }

    @Override
    public boolean release(Release release) {
        return time(Operation.RELEASE, () -> store.release(release), r -> 1);
    }

    @Override
    public boolean deadLetter(DeadLetter deadLetter) {
        return time(Operation.DEAD_LETTER, () -> store.deadLetter(deadLetter), r -> 1);
    }

    @Override
    public Set<String> extend(Extension extension) {
        return time(
                Operation.EXTEND, () -> store.extend(extension), r -> extension.receipts().size());
    }

    @Override
    public Set<String> abandon(Abandonment abandonment) {
        return time(
                Operation.ABANDON,
                () -> store.abandon(abandonment),
                r -> abandonment.receipts().size());
    }

    @Override
    public String toString() {
        return "timed " + store;
    }

    private <T> T time(Operation operation, Supplier<T> call, ToIntFunction<T> messages) {
        Meters m = Objects.requireNonNull(meters.get(operation)); // all there: see the constructor
        long start = System.nanoTime();
        T result;
        try {
            result = call.get();
        } catch (RuntimeException | Error e) {
            m.error().record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            throw e;
        }
        m.ok().record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        m.messages().record(messages.applyAsInt(result));
        return result;
    }
}
