package io.outbox4j.api;

import java.time.Instant;
import java.util.List;

/**
 * Renews live leases: their messages stay invisible to other claimers until {@code until}.
 *
 * @param owner the owner that claimed the messages
 * @param receipts the receipts of the leases to renew (not empty)
 * @param until the new end of the leases
 */
public record Extension(String owner, List<String> receipts, Instant until) {
    /**
     * Validates the extension and copies the receipts.
     *
     * @param owner the owner
     * @param receipts the receipts
     * @param until the until
     * @throws IllegalArgumentException if a field is missing or there is no receipt
     */
    public Extension {
        Checks.text(owner, "owner", 255);
        receipts = Checks.receipts(receipts);
        Checks.notNull(until, "until");
    }
}
