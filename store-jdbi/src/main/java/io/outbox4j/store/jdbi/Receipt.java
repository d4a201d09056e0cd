package io.outbox4j.store.jdbi;

import java.util.Optional;

/**
 * A receipt this store issues for a lease: the claim's token (the value of the {@code receipt}
 * column), the message id, and whether the message has a key. The text form is {@code <token>:<id>}
 * for a message without a key and {@code <token>#<id>} for a keyed one; the flag lets a completion
 * of unkeyed messages skip the bucket locks (nothing can wait behind them). The flag is a hint
 * only: a statement that takes the unkeyed path also requires {@code msg_key IS NULL}.
 *
 * @param token the claim token stored in the row's {@code receipt} column (36 characters)
 * @param id the message id
 * @param keyed whether the message has a key
 */
record Receipt(String token, String id, boolean keyed) {
    /** Length of a claim token (a random UUID in text form). */
    static final int TOKEN_LENGTH = 36;

    private static final char UNKEYED = ':';
    private static final char KEYED = '#';

    /**
     * Reads a receipt; anything this store did not issue is empty (and therefore stale).
     *
     * @param text the receipt as the relay holds it
     * @return the receipt, or empty if the text is not one
     */
    static Optional<Receipt> parse(String text) {
        if (text.length() <= TOKEN_LENGTH + 1) {
            return Optional.empty();
        }
        char separator = text.charAt(TOKEN_LENGTH);
        if (separator != UNKEYED && separator != KEYED) {
            return Optional.empty();
        }
        return Optional.of(
                new Receipt(
                        text.substring(0, TOKEN_LENGTH),
                        text.substring(TOKEN_LENGTH + 1),
                        separator == KEYED));
    }

    /**
     * The identity of a lease in the table: the row id and the token in its {@code receipt} column.
     *
     * @param token the claim token
     * @param id the message id
     */
    record Lease(String token, String id) {}

    /** This receipt's lease in the table. */
    Lease lease() {
        return new Lease(token, id);
    }

    @Override
    public String toString() {
        return token + (keyed ? KEYED : UNKEYED) + id;
    }
}
