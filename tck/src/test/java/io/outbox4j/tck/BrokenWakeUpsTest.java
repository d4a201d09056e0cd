package io.outbox4j.tck;

import static io.outbox4j.tck.KitReport.defect;

import io.outbox4j.api.Message;
import io.outbox4j.api.OutboxWakeUps;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The wake-up kit against the reference store's wake-ups wrapped in one deliberate defect at a
 * time: each run must fail exactly the rules about that defect, saying what the store did wrong,
 * while every other rule passes. The broken stores are static nested classes, never run directly by
 * surefire.
 */
class BrokenWakeUpsTest {

    /** How long these kits wait for a wake-up (the kit's own is 5 s). */
    static final Duration SHORT_BOUND = Duration.ofMillis(250);

    /** The kit over the reference store's wake-ups, changed by one defect. */
    abstract static class BrokenWakeUpsContract extends OutboxWakeUpsContract {
        final InMemoryOutboxStore reference = new InMemoryOutboxStore();

        abstract OutboxWakeUps breakIt(InMemoryOutboxStore reference);

        /**
         * The reference store runs its listeners on the committing thread before the commit
         * returns, so a store that wakes at all has woken before the kit starts waiting: the bound
         * only decides how long a defect that never wakes is waited out.
         */
        @Override
        Duration wakeUpBound() {
            return SHORT_BOUND;
        }

        @Override
        protected OutboxWakeUps wakeUps() {
            return breakIt(reference);
        }

        @Override
        protected void enqueueCommitted(List<Message> messages) {
            reference.enqueueCommitted(messages);
        }
    }

    /** Control: the reference store's own wake-ups must pass every rule. */
    static class NoDefect extends BrokenWakeUpsContract {
        @Override
        OutboxWakeUps breakIt(InMemoryOutboxStore reference) {
            return reference;
        }
    }

    /**
     * Refuses a null wake-up but never listens to a commit; {@code onListen} gets each wake-up when
     * its listening starts.
     */
    static OutboxWakeUps deafToCommits(Consumer<Runnable> onListen) {
        return wakeUp -> {
            if (wakeUp == null) {
                throw new IllegalArgumentException("wakeUp must not be null");
            }
            onListen.accept(wakeUp);
            return () -> {};
        };
    }

    /** Listens to nothing: its relays only poll, although it says it wakes them. */
    static class NeverWakes extends BrokenWakeUpsContract {
        @Override
        OutboxWakeUps breakIt(InMemoryOutboxStore reference) {
            return deafToCommits(wakeUp -> {});
        }
    }

    /** Wakes once when it starts listening, never for a commit. */
    static class WakesOnlyWhenListening extends BrokenWakeUpsContract {
        @Override
        OutboxWakeUps breakIt(InMemoryOutboxStore reference) {
            return deafToCommits(Runnable::run);
        }
    }

    /** Keeps one listener: a new one replaces the one before, and closing any stops it. */
    static class KeepsOneListener extends BrokenWakeUpsContract {
        private OutboxWakeUps.Listening current;

        @Override
        OutboxWakeUps breakIt(InMemoryOutboxStore reference) {
            return wakeUp -> {
                if (current != null) {
                    current.close();
                }
                OutboxWakeUps.Listening l = reference.listen(wakeUp);
                current = l;
                return () -> current.close();
            };
        }
    }

    /** Accepts a null wake-up and fails only at the first commit. */
    static class AcceptsNull extends BrokenWakeUpsContract {
        @Override
        OutboxWakeUps breakIt(InMemoryOutboxStore reference) {
            return wakeUp -> wakeUp == null ? () -> {} : reference.listen(wakeUp);
        }
    }

    static Stream<Arguments> defects() {
        return Stream.of(
                defect(
                        "never wakes",
                        NeverWakes.class,
                        "required_eachCommitWakesAListener",
                        "the listener was not woken within",
                        "required_aCommitWakesEveryListener",
                        "the first of two listeners was not woken",
                        "required_closingOneListenerLeavesTheOthers",
                        "the listener left open was not woken"),
                defect(
                        "wakes only when it starts listening",
                        WakesOnlyWhenListening.class,
                        "required_eachCommitWakesAListener",
                        "was not woken within PT0.25S of commit",
                        "required_aCommitWakesEveryListener",
                        "was not woken within PT0.25S of commit",
                        "required_closingOneListenerLeavesTheOthers",
                        "was not woken within PT0.25S of commit"),
                defect(
                        "keeps one listener",
                        KeepsOneListener.class,
                        "required_aCommitWakesEveryListener",
                        "the first of two listeners was not woken",
                        "required_closingOneListenerLeavesTheOthers",
                        "the listener left open was not woken"),
                defect(
                        "accepts a null wake-up",
                        AcceptsNull.class,
                        "required_listenRefusesNull",
                        "listen(null) must be refused at once"));
    }

    @ParameterizedTest(name = "a store that {0} fails exactly its rules")
    @MethodSource("defects")
    void eachDefectFailsExactlyItsRules(
            String does, Class<? extends OutboxWakeUpsContract> kit, Map<String, String> expected) {
        BrokenStoresTest.assertBreaksExactly(kit, NoDefect.class, expected);
    }
}
