package io.outbox4j.api;

import java.util.List;
import java.util.Optional;

/**
 * One page of dead letters.
 *
 * @param items the dead letters of this page, oldest dead-letter time first
 * @param next the cursor to pass to {@link DeadLetterQuery#after(String)} for the next page; empty
 *     on the last page
 */
public record DeadLetterPage(List<DeadMessage> items, Optional<String> next) {
    /**
     * Validates and copies.
     *
     * @param items the items
     * @param next the cursor
     * @throws IllegalArgumentException if a field is missing
     */
    public DeadLetterPage {
        items = List.copyOf(Checks.notNull(items, "items"));
        Checks.notNull(next, "next");
    }
}
