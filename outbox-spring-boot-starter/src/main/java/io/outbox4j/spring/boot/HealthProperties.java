package io.outbox4j.spring.boot;

import java.time.Duration;

/** The Actuator health indicator. */
public class HealthProperties {
    /**
     * The health turns DOWN when the oldest ready message has waited longer than this (the relay is
     * stuck or too slow).
     */
    private Duration maxOldestReadyAge = Duration.ofMinutes(5);

    /**
     * The health turns DOWN when the relay's publishing has been stalled this long: its publisher
     * calls failed while messages wait for them (a stopped broker, even with one message waiting
     * for its retry), or a call has not answered.
     */
    private Duration maxPublishStall = Duration.ofMinutes(1);

    /** How long one reading of the store's statistics is reused by health and endpoint. */
    private Duration statisticsCacheTtl = Duration.ofSeconds(5);

    /** Creates the defaults. */
    public HealthProperties() {}

    /**
     * The threshold on the oldest ready message's age.
     *
     * @return 5 min by default
     */
    public Duration getMaxOldestReadyAge() {
        return maxOldestReadyAge;
    }

    /**
     * Sets the threshold on the oldest ready message's age.
     *
     * @param maxOldestReadyAge the threshold
     */
    public void setMaxOldestReadyAge(Duration maxOldestReadyAge) {
        this.maxOldestReadyAge = maxOldestReadyAge;
    }

    /**
     * The threshold on stalled publishing.
     *
     * @return 1 min by default ({@code Relay.DEFAULT_MAX_PUBLISH_STALL})
     */
    public Duration getMaxPublishStall() {
        return maxPublishStall;
    }

    /**
     * Sets the threshold on stalled publishing.
     *
     * @param maxPublishStall the threshold
     */
    public void setMaxPublishStall(Duration maxPublishStall) {
        this.maxPublishStall = maxPublishStall;
    }

    /**
     * How long statistics are reused.
     *
     * @return 5 s by default
     */
    public Duration getStatisticsCacheTtl() {
        return statisticsCacheTtl;
    }

    /**
     * Sets how long statistics are reused.
     *
     * @param statisticsCacheTtl the time to live
     */
    public void setStatisticsCacheTtl(Duration statisticsCacheTtl) {
        this.statisticsCacheTtl = statisticsCacheTtl;
    }
}
