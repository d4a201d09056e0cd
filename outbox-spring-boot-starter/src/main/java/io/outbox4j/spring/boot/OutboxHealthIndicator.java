package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code outbox} health: DOWN when the store cannot be read, when the relay this application runs
 * is not running, or when the oldest ready message has waited longer than {@code
 * outbox4j.health.max-oldest-ready-age}; otherwise UP. Details: the relay's state and the store's
 * counts (ready, delayed, leased, dead, blocked keys, oldest ready age).
 */
final class OutboxHealthIndicator implements HealthIndicator {
    private final StatisticsReader statistics;
    private final @Nullable RelayLifecycle relay;
    private final Duration maxOldestReadyAge;

    OutboxHealthIndicator(
            StatisticsReader statistics,
            @Nullable RelayLifecycle relay,
            Duration maxOldestReadyAge) {
        this.statistics = statistics;
        this.relay = relay;
        this.maxOldestReadyAge = maxOldestReadyAge;
    }

    @Override
    public Health health() {
        String relayState =
                relay == null
                        ? "not run by this application"
                        : relay.isRunning() ? "running" : "stopped";
        OutboxStatistics s;
        try {
            s = statistics.read();
        } catch (RuntimeException e) {
            return Health.down(e)
                    .withDetail("relay", relayState)
                    .withDetail("store", "unreachable")
                    .build();
        }
        TopicStatistics t = s.total();
        Health.Builder b;
        if (relay != null && !relay.isRunning()) {
            b = Health.down().withDetail("reason", "the relay is not running");
        } else if (t.oldestReadyAge().compareTo(maxOldestReadyAge) > 0) {
            b =
                    Health.down()
                            .withDetail(
                                    "reason",
                                    "the oldest ready message has waited "
                                            + Checks.format(t.oldestReadyAge())
                                            + ", over outbox4j.health.max-oldest-ready-age ("
                                            + Checks.format(maxOldestReadyAge)
                                            + ")");
        } else {
            b = Health.up();
        }
        return b.withDetail("relay", relayState)
                .withDetail("store", "reachable")
                .withDetail("ready", t.ready())
                .withDetail("delayed", t.delayed())
                .withDetail("leased", t.leased())
                .withDetail("dead", t.dead())
                .withDetail("blockedKeys", s.blockedKeys())
                .withDetail("oldestReadyAge", t.oldestReadyAge().toString())
                .build();
    }
}
