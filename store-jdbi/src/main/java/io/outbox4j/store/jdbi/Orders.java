package io.outbox4j.store.jdbi;

/**
 * How a dialect spells the orders of the claim ({@code c}: available_at, then seq), of the
 * predecessor probe ({@code p}: seq descending) and of the dead-letter listing (dead_at, then seq),
 * so that its planner reads the matching index in order and stops at the limit.
 *
 * @param claim the claim order
 * @param predecessor the predecessor probe order
 * @param dead the dead-letter order
 */
record Orders(String claim, String predecessor, String dead) {
    /** The plain spelling, for planners that see through equality conditions. */
    static final Orders PLAIN = new Orders("c.available_at, c.seq", "p.seq DESC", "dead_at, seq");
}
