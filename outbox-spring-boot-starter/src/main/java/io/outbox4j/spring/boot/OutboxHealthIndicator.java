package io.outbox4j.spring.boot;

import io.outbox4j.api.OutboxStatistics;
import io.outbox4j.api.OutboxStatistics.TopicStatistics;
import io.outbox4j.engine.Relay;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code outbox} health: DOWN when the store cannot be read, when the relay this application runs
 * is not running, when its publishing has been stalled (failed publisher calls while messages wait
 * for them, or a call that does not answer) for {@code outbox4j.health.max-publish-stall}, or when
 * the oldest ready message has waited longer than {@code outbox4j.health.max-oldest-ready-age};
 * otherwise UP. Details: the relay's state and publishing, and the store's counts (ready, delayed,
 * leased, dead, blocked keys, oldest ready age); durations in ISO-8601.
 */
final class OutboxHealthIndicator implements HealthIndicator {
    private final StatisticsReader statistics;
    private final @Nullable RelayLifecycle relay;
    private final Duration maxOldestReadyAge;
    private final Duration maxPublishStall;
    private final Clock clock;

    OutboxHealthIndicator(
            StatisticsReader statistics,
            @Nullable RelayLifecycle relay,
            Duration maxOldestReadyAge,
            Duration maxPublishStall,
            Clock clock) {
        this.statistics = statistics;
        this.relay = relay;
        this.maxOldestReadyAge = maxOldestReadyAge;
        this.maxPublishStall = maxPublishStall;
        this.clock = clock;
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
        Instant now = clock.instant();
        Relay.Publishing publishing = relay == null ? null : relay.publishing();
        Optional<String> publishProblem =
                publishing == null ? Optional.empty() : publishing.problem(now, maxPublishStall);
        Health.Builder b;
        if (relay != null && !relay.isRunning()) {
            b = Health.down().withDetail("reason", "the relay is not running");
        } else if (publishProblem.isPresent()) {
            b =
                    Health.down()
                            .withDetail(
                                    "reason",
                                    publishProblem.get()
                                            + "; see outbox4j.health.max-publish-stall and the"
                                            + " log io.outbox4j.engine.publish");
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
        if (publishing != null) {
            b.withDetail("publishing", details(publishing, now));
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

    private static Map<String, Object> details(Relay.Publishing p, Instant now) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("failedCallsInARow", p.failedCallsInARow());
        d.put("callsInFlight", p.callsInFlight());
        p.lastPublished().ifPresent(at -> d.put("lastPublished", at.toString()));
        p.stalledFor(now).ifPresent(stall -> d.put("stalledFor", stall.toString()));
        return d;
    }
}
