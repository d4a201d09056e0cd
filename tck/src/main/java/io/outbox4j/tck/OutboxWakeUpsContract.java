package io.outbox4j.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxWakeUps;
import io.outbox4j.api.OutboxWakeUps.Listening;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The wake-up contract kit: one JUnit 5 test per rule of {@link OutboxWakeUps} that a test can
 * prove without waiting for something not to happen (docs/relay.md, "Cross-process wake-up").
 *
 * <p>A store implementer whose store implements {@link OutboxWakeUps} extends this class in their
 * test sources and supplies the listening side ({@link #wakeUps()}) and a committed enqueue, at
 * best through another store instance over the same storage (another pool, another client), as
 * another process would commit. Every rule is a package-private test method named {@code
 * required_<rule>} in a {@link Nested} class; none is ever skipped.
 *
 * <p>Time: each rule waits at most {@link #WAKE_UP_BOUND} for a wake-up. A wake-up that comes when
 * the store starts listening (allowed: commits made while it was not listening are claimable) can
 * stand for at most one commit, so the rules ask for one wake-up after each of several commits.
 */
public abstract class OutboxWakeUpsContract {
    /** How long after a commit the kit waits for its wake-up. */
    public static final Duration WAKE_UP_BOUND = Duration.ofSeconds(5);

    /** Commits whose wake-ups the rules await, one after the other. */
    static final int COMMITS = 3;

    private final List<Listening> listenings = new ArrayList<>();

    /** Creates the kit; subclasses supply the factories. */
    protected OutboxWakeUpsContract() {}

    /**
     * Returns the store under test, as a relay would listen on it.
     *
     * @return the listening side
     */
    protected abstract OutboxWakeUps wakeUps();

    /**
     * Enqueues messages in one transaction that commits, at best through another store instance
     * over the same storage.
     *
     * @param messages the messages
     */
    protected abstract void enqueueCommitted(List<Message> messages);

    @AfterEach
    void closeListenings() {
        listenings.forEach(Listening::close);
    }

    private Listening listen(Semaphore woken) {
        Listening l = wakeUps().listen(woken::release);
        listenings.add(l);
        return l;
    }

    private void commitOne() {
        enqueueCommitted(
                List.of(
                        Message.builder()
                                .id("tck-wake-" + UUID.randomUUID())
                                .topic("tck.wake-ups")
                                .module("tck")
                                .payload("{}")
                                .build()));
    }

    /**
     * How long a rule waits for a wake-up: {@link #WAKE_UP_BOUND}. A package-private hook for the
     * kit's own self-test, whose reference store wakes on the committing thread.
     */
    Duration wakeUpBound() {
        return WAKE_UP_BOUND;
    }

    private void assertWoken(Semaphore woken, String who, int commit) throws InterruptedException {
        Duration bound = wakeUpBound();
        assertThat(woken.tryAcquire(bound.toMillis(), TimeUnit.MILLISECONDS))
                .as(
                        "%s was not woken within %s of commit %d of %d: the store must call"
                                + " wakeUp after every commit that enqueued (coalesced, but not"
                                + " dropped)",
                        who, bound, commit, COMMITS)
                .isTrue();
    }

    /** A listener a rule watches: its name in a failure, and the semaphore its wake-up releases. */
    private record Watched(String who, Semaphore woken) {}

    /**
     * Commits {@code COMMITS} times, one message each, and asserts after each commit that every
     * watched listener was woken.
     */
    private void assertEachCommitWakes(Watched... listeners) throws InterruptedException {
        for (int i = 1; i <= COMMITS; i++) {
            for (Watched l : listeners) {
                l.woken().drainPermits();
            }
            commitOne();
            for (Watched l : listeners) {
                assertWoken(l.woken(), l.who(), i);
            }
        }
    }

    /** Rules about who is woken and when. */
    @Nested
    @DisplayName("wake-ups")
    class WakeUps {
        @Test
        @DisplayName("each commit that enqueued wakes a listener")
        void required_eachCommitWakesAListener() throws InterruptedException {
            Semaphore woken = new Semaphore(0);
            listen(woken);
            assertEachCommitWakes(new Watched("the listener", woken));
        }

        @Test
        @DisplayName("a commit wakes every listener, not only one")
        void required_aCommitWakesEveryListener() throws InterruptedException {
            Semaphore first = new Semaphore(0);
            Semaphore second = new Semaphore(0);
            listen(first);
            listen(second);
            assertEachCommitWakes(
                    new Watched("the first of two listeners", first),
                    new Watched("the second of two listeners", second));
        }

        @Test
        @DisplayName("a listener still listening is woken after another was closed")
        void required_closingOneListenerLeavesTheOthers() throws InterruptedException {
            Semaphore closed = new Semaphore(0);
            Semaphore open = new Semaphore(0);
            Listening toClose = listen(closed);
            listen(open);
            toClose.close();
            assertEachCommitWakes(new Watched("the listener left open", open));
        }
    }

    /** Rules about the calls themselves. */
    @Nested
    @DisplayName("listen and close")
    class Calls {
        @Test
        @DisplayName("listen(null) is refused with an IllegalArgumentException naming wakeUp")
        @SuppressWarnings("NullAway") // passes null on purpose: the rule is that it is refused
        void required_listenRefusesNull() {
            Throwable thrown = catchThrowable(() -> listenings.add(wakeUps().listen(null)));
            String what = thrown == null ? "it returned a listening" : "it threw " + thrown;
            assertThat(thrown)
                    .as(
                            "listen(null) must be refused at once with an"
                                    + " IllegalArgumentException naming wakeUp, but %s",
                            what)
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(thrown.getMessage())
                    .as("listen(null) must be refused naming wakeUp, but %s", what)
                    .contains("wakeUp");
        }

        @Test
        @DisplayName("closing a listening twice does nothing")
        void required_closingTwiceDoesNothing() {
            Listening l = listen(new Semaphore(0));
            l.close();
            l.close();
        }
    }
}
