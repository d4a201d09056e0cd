package io.outbox4j.spring.boot;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** The relay that moves messages from the store to the publisher. */
public class RelayProperties {
    /**
     * Whether this application runs a relay. Turn it off when the relay runs elsewhere (the
     * standalone relay, Kafka Connect): the application then only enqueues.
     */
    private boolean enabled = true;

    /**
     * The relay's name in leases, membership and logs (1 to 255 characters, no control characters);
     * default host name, process id and a random suffix.
     */
    private @Nullable String owner;

    /**
     * The largest claim; the loop starts at min-batch-size and doubles while its claims come back
     * full. Between 1 and 10000; default 500.
     */
    private @Nullable Integer batchSize;

    /**
     * The loop's first and smallest claim (at most batch-size). Between 1 and 10000; default 16, or
     * batch-size if smaller.
     */
    private @Nullable Integer minBatchSize;

    /**
     * The most messages claimed and not yet recorded (at least batch-size). Between 1 and 1000000;
     * default 2 × batch-size.
     */
    private @Nullable Integer maxInFlight;

    /**
     * Wake-ups within this time of a claim's start are served by one claim at its end. Between 0s
     * and 1s; default 4ms.
     */
    private @Nullable Duration wakeUpWindow;

    /** Publisher calls at a time, across the batches in flight. Between 1 and 1024; default 4. */
    private @Nullable Integer workers;

    /**
     * How long one publisher call may take before it is cancelled and its messages retried. Between
     * 1ms and 60m; default 30s.
     */
    private @Nullable Duration deliveryTimeout;

    /**
     * How long a claim leases its messages, renewed every third of it; a crashed relay's messages
     * are claimable again one lease after its last renewal. Between 1s and 30m; default 15s.
     */
    private @Nullable Duration lease;

    /**
     * How long a relay's membership lasts without a renewal (by the store's clock); a crashed
     * relay's buckets move within it plus one renewal. Between 100ms and 60m; default 10s.
     */
    private @Nullable Duration memberLease;

    /**
     * The attempt at which a failing message is dead-lettered. Between 1 and 2147483647; default 8.
     */
    private @Nullable Integer maxAttempts;

    /**
     * The first retry delay; each further attempt doubles it (plus 0-50 % spread). Between 1ms and
     * 1440m; default 1s.
     */
    private @Nullable Duration backoffBase;

    /** The longest retry delay (at least backoff-base). Between 1ms and 10080m; default 10m. */
    private @Nullable Duration backoffMax;

    /**
     * The longest the loop waits after a partial or empty claim, unless woken up (10 ms after a
     * claim that found messages, doubling up to this). Between 1ms and 60m; default 1s.
     */
    private @Nullable Duration pollInterval;

    /**
     * How long closing waits for the batches in flight before it cancels them. Between 0s and 60m;
     * default 30s.
     */
    private @Nullable Duration shutdownTimeout;

    /**
     * Whether the relay joins its outbox as a member and claims keyed messages of its own buckets
     * only (docs/scale-out.md); default true.
     */
    private @Nullable Boolean membership;

    /** Whether a commit that enqueued messages wakes the relay at once. */
    private boolean wakeUpAfterCommit = true;

    /** Creates the defaults. */
    public RelayProperties() {}

    /**
     * Whether the relay runs.
     *
     * @return {@code true} by default
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether the relay runs.
     *
     * @param enabled the flag
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * The owner name.
     *
     * @return the owner, or null for a random one
     */
    public @Nullable String getOwner() {
        return owner;
    }

    /**
     * Sets the owner name.
     *
     * @param owner the owner
     */
    public void setOwner(@Nullable String owner) {
        this.owner = owner;
    }

    /**
     * The batch size.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Integer getBatchSize() {
        return batchSize;
    }

    /**
     * Sets the batch size.
     *
     * @param batchSize the batch size
     */
    public void setBatchSize(@Nullable Integer batchSize) {
        this.batchSize = batchSize;
    }

    /**
     * The number of workers.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Integer getWorkers() {
        return workers;
    }

    /**
     * Sets the number of workers.
     *
     * @param workers the workers
     */
    public void setWorkers(@Nullable Integer workers) {
        this.workers = workers;
    }

    /**
     * The delivery timeout.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getDeliveryTimeout() {
        return deliveryTimeout;
    }

    /**
     * Sets the delivery timeout.
     *
     * @param deliveryTimeout the timeout
     */
    public void setDeliveryTimeout(@Nullable Duration deliveryTimeout) {
        this.deliveryTimeout = deliveryTimeout;
    }

    /**
     * The lease.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getLease() {
        return lease;
    }

    /**
     * Sets the lease.
     *
     * @param lease the lease
     */
    public void setLease(@Nullable Duration lease) {
        this.lease = lease;
    }

    /**
     * The member lease.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getMemberLease() {
        return memberLease;
    }

    /**
     * Sets the member lease.
     *
     * @param memberLease the member lease
     */
    public void setMemberLease(@Nullable Duration memberLease) {
        this.memberLease = memberLease;
    }

    /**
     * The attempts before a message is dead-lettered.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Integer getMaxAttempts() {
        return maxAttempts;
    }

    /**
     * Sets the attempts before a message is dead-lettered.
     *
     * @param maxAttempts the attempts
     */
    public void setMaxAttempts(@Nullable Integer maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    /**
     * The first retry delay.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getBackoffBase() {
        return backoffBase;
    }

    /**
     * Sets the first retry delay.
     *
     * @param backoffBase the delay
     */
    public void setBackoffBase(@Nullable Duration backoffBase) {
        this.backoffBase = backoffBase;
    }

    /**
     * The longest retry delay.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getBackoffMax() {
        return backoffMax;
    }

    /**
     * Sets the longest retry delay.
     *
     * @param backoffMax the delay
     */
    public void setBackoffMax(@Nullable Duration backoffMax) {
        this.backoffMax = backoffMax;
    }

    /**
     * The poll interval.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getPollInterval() {
        return pollInterval;
    }

    /**
     * Sets the poll interval.
     *
     * @param pollInterval the interval
     */
    public void setPollInterval(@Nullable Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    /**
     * The shutdown timeout.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getShutdownTimeout() {
        return shutdownTimeout;
    }

    /**
     * Sets the shutdown timeout.
     *
     * @param shutdownTimeout the timeout
     */
    public void setShutdownTimeout(@Nullable Duration shutdownTimeout) {
        this.shutdownTimeout = shutdownTimeout;
    }

    /**
     * Whether a commit wakes the relay.
     *
     * @return {@code true} by default
     */
    public boolean isWakeUpAfterCommit() {
        return wakeUpAfterCommit;
    }

    /**
     * Sets whether a commit wakes the relay.
     *
     * @param wakeUpAfterCommit the flag
     */
    public void setWakeUpAfterCommit(boolean wakeUpAfterCommit) {
        this.wakeUpAfterCommit = wakeUpAfterCommit;
    }

    /**
     * Returns the smallest claim of the loop.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Integer getMinBatchSize() {
        return minBatchSize;
    }

    /**
     * Sets the smallest claim of the loop.
     *
     * @param minBatchSize the value, or null for the engine's default
     */
    public void setMinBatchSize(@Nullable Integer minBatchSize) {
        this.minBatchSize = minBatchSize;
    }

    /**
     * Returns the bound on messages claimed and not yet recorded.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Integer getMaxInFlight() {
        return maxInFlight;
    }

    /**
     * Sets the bound on messages claimed and not yet recorded.
     *
     * @param maxInFlight the value, or null for the engine's default
     */
    public void setMaxInFlight(@Nullable Integer maxInFlight) {
        this.maxInFlight = maxInFlight;
    }

    /**
     * Returns the wake-up window.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Duration getWakeUpWindow() {
        return wakeUpWindow;
    }

    /**
     * Sets the wake-up window.
     *
     * @param wakeUpWindow the value, or null for the engine's default
     */
    public void setWakeUpWindow(@Nullable Duration wakeUpWindow) {
        this.wakeUpWindow = wakeUpWindow;
    }

    /**
     * Returns whether the relay joins its outbox as a member.
     *
     * @return the value, or null for the engine's default
     */
    public @Nullable Boolean getMembership() {
        return membership;
    }

    /**
     * Sets whether the relay joins its outbox as a member.
     *
     * @param membership the value, or null for the engine's default
     */
    public void setMembership(@Nullable Boolean membership) {
        this.membership = membership;
    }
}
