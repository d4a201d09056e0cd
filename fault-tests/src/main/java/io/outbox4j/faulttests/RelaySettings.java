package io.outbox4j.faulttests;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How the drills configure every relay, in this JVM or a child JVM (passed on the command line as
 * {@code name=value} arguments).
 *
 * @param batchSize messages per claim
 * @param workers concurrent publisher calls
 * @param deliveryTimeout the bound of one publisher call (also the Kafka producer's delivery
 *     timeout)
 * @param lease the lease of each claim and renewal (what bounds crash recovery)
 * @param pollInterval the idle wait between claims
 * @param backoff the fixed retry delay after a failed publish
 * @param maxAttempts the attempt at which a message is dead-lettered
 * @param linkLatency a pause before each publisher call, standing for the network round trip to a
 *     remote broker: it stretches a run of a few thousand messages over seconds so that faults land
 *     while messages are in flight (zero: none)
 * @param memberLease the relay's member lease (docs/scale-out.md: it joins the outbox as a member,
 *     renews every third of it and claims keyed messages only of its buckets), or zero: not a
 *     member ({@code Relay.Builder.membership(false)}), it claims from every bucket
 * @param clockOffset how far the relay's clock is from this machine's ({@code Relay.Builder.clock}
 *     with {@link Clock#offset}): a relay whose clock is skewed (zero: none)
 */
public record RelaySettings(
        int batchSize,
        int workers,
        Duration deliveryTimeout,
        Duration lease,
        Duration pollInterval,
        Duration backoff,
        int maxAttempts,
        Duration linkLatency,
        Duration memberLease,
        Duration clockOffset) {

    /**
     * Checks the settings.
     *
     * @throws IllegalArgumentException if the member lease is negative
     */
    public RelaySettings {
        if (memberLease == null || memberLease.isNegative()) {
            throw new IllegalArgumentException(
                    "memberLease must be zero (not a member) or positive, but was " + memberLease);
        }
        if (clockOffset == null) {
            throw new IllegalArgumentException("clockOffset must not be null");
        }
    }

    /**
     * The drills' settings: batches of 50 with 4 workers (so a batch holds several messages of some
     * keys), a delivery timeout of 1 second, a short lease of 3 seconds (renewed by the relay while
     * it holds the messages), a retry delay of 200 ms, and no dead letters from attempts (an outage
     * must not turn into dead letters that would then count as lost). The relays are not members of
     * the outbox (each claims from every bucket, as every relay did before 0.2): a member killed
     * with its default member lease of 10 s would hold its buckets that long, and these drills are
     * about message leases. {@link #withMemberLease} makes them members.
     */
    public static RelaySettings drill() {
        return new RelaySettings(
                50,
                4,
                Duration.ofSeconds(1),
                Duration.ofSeconds(3),
                Duration.ofMillis(50),
                Duration.ofMillis(200),
                10_000,
                Duration.ofMillis(10),
                Duration.ZERO,
                Duration.ZERO);
    }

    /** Whether the relays join the outbox as members. */
    public boolean member() {
        return !memberLease.isZero();
    }

    /**
     * These settings with relays that are members of the outbox with the given member lease.
     *
     * @param memberLease the member lease (zero: not a member)
     * @return the new settings
     */
    public RelaySettings withMemberLease(Duration memberLease) {
        return with(memberLease, clockOffset);
    }

    /**
     * These settings with a relay clock that is {@code offset} away from this machine's.
     *
     * @param offset positive: ahead, negative: behind
     * @return the new settings
     */
    public RelaySettings withClockOffset(Duration offset) {
        return with(memberLease, offset);
    }

    private RelaySettings with(Duration memberLease, Duration clockOffset) {
        return new RelaySettings(
                batchSize,
                workers,
                deliveryTimeout,
                lease,
                pollInterval,
                backoff,
                maxAttempts,
                linkLatency,
                memberLease,
                clockOffset);
    }

    /** As {@code name=value} pairs, for a child JVM's command line and for the figures. */
    public Map<String, String> toArgs() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("batchSize", Integer.toString(batchSize));
        m.put("workers", Integer.toString(workers));
        m.put("deliveryTimeoutMs", Long.toString(deliveryTimeout.toMillis()));
        m.put("leaseMs", Long.toString(lease.toMillis()));
        m.put("pollIntervalMs", Long.toString(pollInterval.toMillis()));
        m.put("backoffMs", Long.toString(backoff.toMillis()));
        m.put("maxAttempts", Integer.toString(maxAttempts));
        m.put("linkLatencyMs", Long.toString(linkLatency.toMillis()));
        m.put("memberLeaseMs", Long.toString(memberLease.toMillis()));
        m.put("clockOffsetMs", Long.toString(clockOffset.toMillis()));
        return m;
    }

    /** Reads what {@link #toArgs()} wrote. */
    public static RelaySettings fromArgs(Map<String, String> args) {
        return new RelaySettings(
                Integer.parseInt(required(args, "batchSize")),
                Integer.parseInt(required(args, "workers")),
                Duration.ofMillis(Long.parseLong(required(args, "deliveryTimeoutMs"))),
                Duration.ofMillis(Long.parseLong(required(args, "leaseMs"))),
                Duration.ofMillis(Long.parseLong(required(args, "pollIntervalMs"))),
                Duration.ofMillis(Long.parseLong(required(args, "backoffMs"))),
                Integer.parseInt(required(args, "maxAttempts")),
                Duration.ofMillis(Long.parseLong(required(args, "linkLatencyMs"))),
                Duration.ofMillis(Long.parseLong(args.getOrDefault("memberLeaseMs", "0"))),
                Duration.ofMillis(Long.parseLong(args.getOrDefault("clockOffsetMs", "0"))));
    }

    static String required(Map<String, String> args, String name) {
        String v = args.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing argument " + name + "=...");
        }
        return v;
    }
}
