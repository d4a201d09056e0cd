package io.outbox4j.relay;

import io.outbox4j.api.OutboxAdmin;
import io.outbox4j.cli.internal.StoreConnection;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Whether the store answers, for the readiness check: one cheap read through the admin port (the
 * last error of an id no message has, a lookup by primary key), at most once per {@link #REUSE},
 * bounded by {@link #TIMEOUT}.
 */
final class StoreProbe {
    static final String PROBE_ID = "outbox4j-relay-readiness-probe";
    static final Duration TIMEOUT = Duration.ofSeconds(3);
    static final Duration REUSE = Duration.ofSeconds(2);

    private final OutboxAdmin admin;
    private final ExecutorService storeThread;
    private long checkedAt;
    private Optional<String> last = Optional.of("not checked yet");
    private @Nullable Future<?> inFlight;

    StoreProbe(OutboxAdmin admin, ExecutorService storeThread) {
        this.admin = admin;
        this.storeThread = storeThread;
    }

    /** Empty if the store answered, else why not. */
    synchronized Optional<String> check() {
        long now = System.nanoTime();
        if (checkedAt != 0 && now - checkedAt < REUSE.toNanos()) {
            return last;
        }
        Future<?> probe = inFlight;
        if (probe == null) {
            probe = storeThread.submit(() -> admin.lastError(PROBE_ID));
            inFlight = probe;
        }
        try {
            probe.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            last = Optional.empty();
            inFlight = null;
        } catch (TimeoutException e) {
            last = Optional.of("the store did not answer within " + TIMEOUT.toSeconds() + " s");
        } catch (ExecutionException e) {
            last =
                    Optional.of(
                            "the store failed: "
                                    + StoreConnection.mask(
                                            StoreConnection.rootMessage(
                                                    e.getCause() == null ? e : e.getCause())));
            inFlight = null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
        checkedAt = System.nanoTime();
        return last;
    }
}
