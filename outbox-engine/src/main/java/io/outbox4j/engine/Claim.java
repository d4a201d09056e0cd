package io.outbox4j.engine;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.OutboxStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Claims one batch: up to {@code limit} deliveries leased for {@code lease}. */
final class Claim {
    private Claim() {}

    /**
     * Before a member's first claim, renews its membership so that the relay's clock is in the
     * store's frame ({@link Members#joinBeforeClaim()}); a store failure is reported to the
     * observer and thrown, as for a failed claim.
     */
    static void join(Settings settings) {
        try {
            settings.members().joinBeforeClaim();
        } catch (RuntimeException e) {
            settings.observer().storeError(e);
            throw e;
        }
    }

    /**
     * Claims at {@code claimTime}; a store failure is reported to the observer and thrown.
     *
     * @return the claimed deliveries in claim order, possibly none
     */
    static List<Tracked> claim(Settings settings, OutboxStore store, Instant claimTime, int limit) {
        List<Delivery> deliveries;
        try {
            deliveries =
                    store.claim(
                            new ClaimRequest(
                                    settings.owner(),
                                    claimTime,
                                    settings.lease(),
                                    limit,
                                    settings.members().active()));
        } catch (RuntimeException e) {
            settings.observer().storeError(e);
            throw e;
        }
        if (deliveries == null || deliveries.isEmpty()) {
            return List.of();
        }
        List<Tracked> tracked = new ArrayList<>(deliveries.size());
        for (Delivery d : deliveries) {
            tracked.add(new Tracked(d, tracked.size()));
        }
        return tracked;
    }
}
