package io.outbox4j.tck;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.DeadLetter;
import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.api.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

/**
 * The admin contract kit: one JUnit 5 test per rule of the {@link OutboxAdmin} port (statistics,
 * dead letters page by page, replay, discard, last error), run against a store's admin side and its
 * dispatch side over the same storage.
 *
 * <p>A store implementer extends this class in their test sources and supplies the factories: the
 * store under test ({@link #store()}, built with the store's defaults, so dead letters block their
 * key), its admin port ({@link #admin()}; by default {@code store()} itself when it implements
 * {@link OutboxAdmin}), a way to enqueue messages in a committed transaction and a way to empty the
 * storage. Like {@link OutboxStoreContract}, every rule is a package-private test method named
 * {@code required_<rule>}, grouped by concern in {@link Nested} classes, and a failure says what
 * the store did wrong. No knob skips a rule.
 *
 * <p>Time: every instant the kit passes ({@link ClaimRequest#now()}, {@link
 * OutboxAdmin#statistics(Instant)}, {@link DeadLetter#at()}, the {@code now} of a replay) is the
 * kit's own clock, which starts at the wall clock plus {@link #clockSkewTolerance()} after each
 * enqueue and only moves forward; no rule sleeps.
 *
 * <p>Lifecycle: before each rule the kit calls {@link #resetStore()}; the subclass's own
 * {@code @BeforeEach} and {@code @BeforeAll} methods run first.
 */
public abstract class OutboxAdminContract {
    /** The kit's clock and test data, which every rule group of this instance shares. */
    final KitClock clock = new KitClock(this::clockSkewTolerance);

    /** Creates the kit; subclasses supply the factories. */
    protected OutboxAdminContract() {}

    /**
     * Returns the store under test, built with the store's defaults. Called after {@link
     * #resetStore()} before each rule; may return the same instance every time.
     *
     * @return the store whose admin port is tested
     */
    protected abstract OutboxStore store();

    /**
     * Returns the admin port over the same storage as {@link #store()}. The default returns {@code
     * store()} when it implements {@link OutboxAdmin}.
     *
     * @return the admin port under test
     */
    protected OutboxAdmin admin() {
        if (store() instanceof OutboxAdmin a) {
            return a;
        }
        throw new IllegalStateException(
                "store() is no OutboxAdmin: override admin() to return the admin port of the store");
    }

    /** Removes every message (pending, leased and dead) from the storage. */
    protected abstract void resetStore();

    /**
     * Enqueues the messages through the store's write side in one transaction that commits.
     *
     * @param messages the messages, in order
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    /**
     * How far the store's enqueue clock may differ from this JVM's clock; see {@link
     * OutboxStoreContract#clockSkewTolerance()}. The default is one second.
     *
     * @return a zero or positive tolerance
     */
    protected Duration clockSkewTolerance() {
        return Duration.ofSeconds(1);
    }

    // ------------------------------------------------------------------------------------------------
    // The rule groups: each a package-private class Admin…Rules over this instance's clock
    // ------------------------------------------------------------------------------------------------

    @Nested
    @DisplayName("Statistics")
    class Statistics extends AdminStatisticsRules {
        Statistics() {
            super(OutboxAdminContract.this);
        }
    }

    @Nested
    @DisplayName("Dead letters")
    class DeadLetters extends AdminDeadLetterRules {
        DeadLetters() {
            super(OutboxAdminContract.this);
        }
    }

    @Nested
    @DisplayName("Replay")
    class Replay extends AdminReplayRules {
        Replay() {
            super(OutboxAdminContract.this);
        }
    }

    @Nested
    @DisplayName("Discard")
    class Discard extends AdminDiscardRules {
        Discard() {
            super(OutboxAdminContract.this);
        }
    }

    @Nested
    @DisplayName("Last error")
    class LastError extends AdminLastErrorRules {
        LastError() {
            super(OutboxAdminContract.this);
        }
    }
}
