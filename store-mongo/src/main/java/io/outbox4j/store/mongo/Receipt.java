package io.outbox4j.store.mongo;

import java.util.Optional;
import java.util.UUID;

/**
 * A delivery's receipt: the lease token of the claim that leased the message, then the message id
 * ({@code <32 hex digits>.<id>}). The document stores only the token, which every document of one
 * claim shares; the id in the receipt lets release and dead-letter find their document by {@code
 * _id}, and complete pair each token with its ids. A token is random (122 bits) and fresh for every
 * claim.
 */
record Receipt(String token, String messageId) {
    static final int TOKEN_LENGTH = 32;

    /** The longest message id a receipt can carry within the API's 512-character receipt limit. */
    static final int MAX_ID_LENGTH = 512 - TOKEN_LENGTH - 1;

    /** A fresh token for one claim. */
    static String newToken() {
        UUID u = UUID.randomUUID();
        return hex(u.getMostSignificantBits()) + hex(u.getLeastSignificantBits());
    }

    /** Reads a receipt this store issued; anything else (a foreign or made-up receipt) is empty. */
    static Optional<Receipt> parse(String receipt) {
        if (receipt.length() < TOKEN_LENGTH + 2 || receipt.charAt(TOKEN_LENGTH) != '.') {
            return Optional.empty();
        }
        for (int i = 0; i < TOKEN_LENGTH; i++) {
            if (Character.digit(receipt.charAt(i), 16) < 0) {
                return Optional.empty();
            }
        }
        return Optional.of(
                new Receipt(
                        receipt.substring(0, TOKEN_LENGTH), receipt.substring(TOKEN_LENGTH + 1)));
    }

    @Override
    public String toString() {
        return token + "." + messageId;
    }

    private static String hex(long bits) {
        String h = Long.toHexString(bits);
        return "0".repeat(16 - h.length()) + h;
    }
}
