package io.outbox4j.api;

import java.util.List;

/**
 * Gives back leases of messages that were never handed to a publisher: the attempt each claim
 * counted is taken back and each message is due again at once, in its old place.
 *
 * @param owner the owner that claimed the messages
 * @param receipts the receipts of the untried leases (not empty)
 */
public record Abandonment(String owner, List<String> receipts) {
    /**
     * Validates the abandonment and copies the receipts.
     *
     * @param owner the owner
     * @param receipts the receipts
     * @throws IllegalArgumentException if the owner is missing or there is no receipt
     */
    public Abandonment {
        Checks.text(owner, "owner", 255);
        receipts = Checks.receipts(receipts);
    }
}
