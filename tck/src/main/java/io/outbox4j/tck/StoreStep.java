package io.outbox4j.tck;

import java.util.List;
import java.util.stream.Collectors;

/**
 * One operation of a random sequence that {@link OutboxStoreProperties} applies to a store and to
 * its model. Owners and receipts are named by small indexes ({@code pick} is taken modulo the
 * receipts the owner has received so far, stale ones included), so that jqwik can shrink a failing
 * sequence to a short, readable one.
 */
sealed interface StoreStep {
    /** Commits (or rolls back) messages; {@code keys} holds a key index or -1 for no key. */
    record Enqueue(List<Integer> keys, int delaySeconds, boolean rollBack) implements StoreStep {
        @Override
        public String toString() {
            return (rollBack ? "enqueue+rollback" : "enqueue")
                    + keys.stream()
                            .map(k -> k < 0 ? "-" : "k" + k)
                            .collect(Collectors.joining(",", "[", "]"))
                    + (delaySeconds > 0 ? " notBefore=+" + delaySeconds + "s" : "");
        }
    }

    /** A claim by owner {@code owner} (owner 1 claims through the second store instance). */
    record Claim(int owner, int limit, int leaseSeconds) implements StoreStep {
        @Override
        public String toString() {
            return "claim(owner" + owner + ", limit=" + limit + ", lease=" + leaseSeconds + "s)";
        }
    }

    /**
     * Completes some receipts of {@code owner}; with {@code foreign}, receipts of another owner.
     */
    record Complete(int owner, List<Integer> picks, boolean foreign) implements StoreStep {
        @Override
        public String toString() {
            return "complete(owner" + owner + ", " + picks + (foreign ? ", foreign" : "") + ")";
        }
    }

    /** Releases one receipt for a retry {@code delaySeconds} later. */
    record Release(int owner, int pick, int delaySeconds) implements StoreStep {
        @Override
        public String toString() {
            return "release(owner" + owner + ", " + pick + ", retry=+" + delaySeconds + "s)";
        }
    }

    /** Dead-letters one receipt. */
    record DeadLetter(int owner, int pick) implements StoreStep {
        @Override
        public String toString() {
            return "deadLetter(owner" + owner + ", " + pick + ")";
        }
    }

    /** Extends some receipts to {@code seconds} from now. */
    record Extend(int owner, List<Integer> picks, int seconds) implements StoreStep {
        @Override
        public String toString() {
            return "extend(owner" + owner + ", " + picks + ", +" + seconds + "s)";
        }
    }

    /** Gives some receipts back untried. */
    record Abandon(int owner, List<Integer> picks) implements StoreStep {
        @Override
        public String toString() {
            return "abandon(owner" + owner + ", " + picks + ")";
        }
    }

    /** Replays (or discards) one dead letter through the admin port. */
    record Admin(int pick, boolean discard) implements StoreStep {
        @Override
        public String toString() {
            return (discard ? "discard(" : "replay(") + "dead " + pick + ")";
        }
    }

    /** Moves the clock {@code seconds} seconds and one millisecond forward. */
    record Advance(int seconds) implements StoreStep {
        @Override
        public String toString() {
            return "advance(+" + seconds + "s)";
        }
    }
}
