package io.outbox4j.tck;

import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.Delivery;
import io.outbox4j.api.OutboxStore;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The store kit against a correct store whose claims come back empty whenever another claim runs
 * beside them, as a claim behind {@code FOR UPDATE SKIP LOCKED} does while another claim holds the
 * rows it then leaves. The concurrency rules once stopped their claimers at such an empty claim and
 * reported a message the store still held (seen on PostgreSQL); every rule must pass here.
 */
class ShyClaimsTest {

    /** The reference store with shy claims. */
    static class ShyStoreContract extends BrokenStoreContract {
        @Override
        OutboxStore breakIt(InMemoryOutboxStore store) {
            return new ShyStore(store);
        }
    }

    /** Claims that find nothing when another claim started before them or while they ran. */
    private static final class ShyStore extends ForwardingStore {
        /**
         * How long a claim takes before it looks at the rows: long enough for others to overlap.
         */
        private static final long CLAIM_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

        private final AtomicInteger running = new AtomicInteger();
        private final AtomicLong started = new AtomicLong();

        ShyStore(OutboxStore delegate) {
            super(delegate);
        }

        @Override
        @SuppressWarnings("UnsynchronizedOverridesSynchronized") // claims must overlap to be shy;
        // the forwarding claim (super.claim) is still synchronized
        public List<Delivery> claim(ClaimRequest r) {
            long mine = started.incrementAndGet();
            boolean othersRunning = running.getAndIncrement() > 0;
            try {
                LockSupport.parkNanos(CLAIM_NANOS);
                if (othersRunning || started.get() != mine) {
                    return List.of(); // the rows were locked by the other claim
                }
                return super.claim(r);
            } finally {
                running.decrementAndGet();
            }
        }
    }

    @Test
    @DisplayName("every store rule passes on a store whose overlapping claims come back empty")
    void everyRulePassesWithShyClaims() {
        KitReport.of(ShyStoreContract.class).assertEveryRulePasses("store", 68);
    }
}
