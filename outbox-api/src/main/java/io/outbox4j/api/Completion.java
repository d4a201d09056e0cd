package io.outbox4j.api;

import java.util.List;

/**
 * Marks a batch of leases as published, so their messages are removed for good.
 *
 * @param owner the owner that claimed the messages
 * @param receipts the receipts of the published leases (not empty, no duplicates required)
 */
public record Completion(String owner, List<String> receipts) {
    /**
     * Validates the completion and copies the receipts.
     *
     * @param owner the owner
     * @param receipts the receipts
     * @throws IllegalArgumentException if the owner is missing or there is no receipt
     */
    public Completion {
        Checks.text(owner, "owner", 255);
        receipts = Checks.receipts(receipts);
    }
}
