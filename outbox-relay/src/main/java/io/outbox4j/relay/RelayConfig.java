package io.outbox4j.relay;

import io.outbox4j.api.Backoff;
import io.outbox4j.api.ClaimRequest;
import io.outbox4j.api.OutboxMembership;
import io.outbox4j.cli.internal.Settings;
import io.outbox4j.cli.internal.SettingsException;
import io.outbox4j.cli.internal.StoreConnection;
import io.outbox4j.engine.Relay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The relay's settings, read and checked once at startup: store, publisher, relay, HTTP and metrics
 * sections. A bad or unknown setting stops the process before anything is opened, with a message
 * that names the setting and where it came from.
 */
final class RelayConfig {
    static final String STORE_CREATE_SCHEMA = "store.create-schema";
    static final String PUBLISHER_URI = "publisher.uri";
    static final String PUBLISHER_KAFKA = "publisher.kafka.";
    static final String PUBLISHER_AMQP_EXCHANGE = "publisher.amqp.exchange";
    static final String PUBLISHER_SQS_REGION = "publisher.sqs.region";
    static final String OWNER = "relay.owner";
    static final String BATCH_SIZE = "relay.batch-size";
    static final String MIN_BATCH_SIZE = "relay.min-batch-size";
    static final String MAX_IN_FLIGHT = "relay.max-in-flight";
    static final String WORKERS = "relay.workers";
    static final String DELIVERY_TIMEOUT = "relay.delivery-timeout";
    static final String LEASE = "relay.lease";
    static final String MEMBER_LEASE = "relay.member-lease";
    static final String MAX_ATTEMPTS = "relay.max-attempts";
    static final String BACKOFF_BASE = "relay.backoff-base";
    static final String BACKOFF_MAX = "relay.backoff-max";
    static final String POLL_INTERVAL = "relay.poll-interval";
    static final String SHUTDOWN_TIMEOUT = "relay.shutdown-timeout";
    static final String MAX_PUBLISH_STALL = "relay.max-publish-stall";
    static final String HTTP_PORT = "http.port";
    static final String HTTP_HOST = "http.host";
    static final String METRICS_STORE_STATISTICS = "metrics.store-statistics";
    static final String METRICS_STATISTICS_INTERVAL = "metrics.statistics-interval";
    static final String LOG_LEVEL = "log.level";

    /** The HTTP port when none is set. */
    static final int DEFAULT_HTTP_PORT = 8080;

    /** How long store statistics are reused before /metrics reads them again. */
    static final Duration DEFAULT_STATISTICS_INTERVAL = Duration.ofSeconds(15);

    /** The first retry delay of the default backoff (the engine's {@link Backoff#DEFAULT}). */
    static final Duration DEFAULT_BACKOFF_BASE = Duration.ofSeconds(1);

    /** The longest retry delay of the default backoff. */
    static final Duration DEFAULT_BACKOFF_MAX = Duration.ofMinutes(10);

    static final List<String> KEYS;

    static {
        List<String> keys = new ArrayList<>(StoreConnection.KEYS);
        keys.addAll(
                List.of(
                        STORE_CREATE_SCHEMA,
                        PUBLISHER_URI,
                        PUBLISHER_AMQP_EXCHANGE,
                        PUBLISHER_SQS_REGION,
                        OWNER,
                        BATCH_SIZE,
                        MIN_BATCH_SIZE,
                        MAX_IN_FLIGHT,
                        WORKERS,
                        DELIVERY_TIMEOUT,
                        LEASE,
                        MEMBER_LEASE,
                        MAX_ATTEMPTS,
                        BACKOFF_BASE,
                        BACKOFF_MAX,
                        POLL_INTERVAL,
                        SHUTDOWN_TIMEOUT,
                        MAX_PUBLISH_STALL,
                        HTTP_PORT,
                        HTTP_HOST,
                        METRICS_STORE_STATISTICS,
                        METRICS_STATISTICS_INTERVAL,
                        LOG_LEVEL));
        KEYS = List.copyOf(keys);
    }

    static final List<String> SECTIONS =
            List.of("store.", "publisher.", "relay.", "http.", "metrics.", "log.");

    final Settings settings;
    final boolean createSchema;
    final String publisherUri;
    final Optional<String> owner;
    final int batchSize;
    final Optional<Integer> minBatchSize;
    final Optional<Integer> maxInFlight;
    final int workers;
    final Duration deliveryTimeout;
    final Duration lease;
    final Duration memberLease;
    final int maxAttempts;
    final Duration backoffBase;
    final Duration backoffMax;
    final Duration pollInterval;
    final Duration shutdownTimeout;
    final Duration maxPublishStall;
    final int httpPort;
    final String httpHost;
    final boolean storeStatistics;
    final Duration statisticsInterval;

    private RelayConfig(Settings s) {
        s.rejectUnknown(KEYS, List.of(PUBLISHER_KAFKA), SECTIONS, true);
        this.settings = s;
        StoreConnection.checkUrl(s);
        this.createSchema = s.flag(STORE_CREATE_SCHEMA, false);
        this.publisherUri =
                s.required(
                        PUBLISHER_URI,
                        "give kafka://host:9092[,host:9092], amqp://user:pass@host:5672/vhost, sqs://host:port"
                                + " or sqs://aws");
        Publishers.check(publisherUri, s);
        this.owner = s.text(OWNER);
        this.batchSize = s.integer(BATCH_SIZE, Relay.DEFAULT_BATCH_SIZE, 1, ClaimRequest.MAX_LIMIT);
        this.minBatchSize = s.optionalInteger(MIN_BATCH_SIZE, 1, batchSize);
        this.maxInFlight = s.optionalInteger(MAX_IN_FLIGHT, batchSize, 1_000_000);
        this.workers = s.integer(WORKERS, Relay.DEFAULT_WORKERS, 1, 1024);
        this.deliveryTimeout =
                s.duration(DELIVERY_TIMEOUT, Duration.ofMillis(1), Duration.ofHours(1))
                        .orElse(Relay.DEFAULT_DELIVERY_TIMEOUT);
        this.lease =
                s.duration(LEASE, Relay.MIN_LEASE, Relay.MAX_LEASE).orElse(Relay.DEFAULT_LEASE);
        this.memberLease =
                s.duration(MEMBER_LEASE, OutboxMembership.MIN_LEASE, OutboxMembership.MAX_LEASE)
                        .orElse(Relay.DEFAULT_MEMBER_LEASE);
        this.maxAttempts =
                s.integer(MAX_ATTEMPTS, Relay.DEFAULT_MAX_ATTEMPTS, 1, Integer.MAX_VALUE);
        this.backoffBase =
                s.duration(BACKOFF_BASE, Duration.ofMillis(1), Duration.ofDays(1))
                        .orElse(DEFAULT_BACKOFF_BASE);
        this.backoffMax =
                s.duration(BACKOFF_MAX, Duration.ofMillis(1), Duration.ofDays(7))
                        .orElse(DEFAULT_BACKOFF_MAX);
        if (backoffMax.compareTo(backoffBase) < 0) {
            throw new SettingsException(
                    BACKOFF_MAX
                            + " ("
                            + Settings.format(backoffMax)
                            + ") must not be shorter than "
                            + BACKOFF_BASE
                            + " ("
                            + Settings.format(backoffBase)
                            + ")");
        }
        this.pollInterval =
                s.duration(POLL_INTERVAL, Duration.ofMillis(1), Duration.ofHours(1))
                        .orElse(Relay.DEFAULT_POLL_INTERVAL);
        this.shutdownTimeout =
                s.duration(SHUTDOWN_TIMEOUT, Duration.ZERO, Duration.ofHours(1))
                        .orElse(Relay.DEFAULT_SHUTDOWN_TIMEOUT);
        this.maxPublishStall =
                s.duration(MAX_PUBLISH_STALL, Duration.ofSeconds(1), Duration.ofDays(1))
                        .orElse(Relay.DEFAULT_MAX_PUBLISH_STALL);
        this.httpPort = s.integer(HTTP_PORT, DEFAULT_HTTP_PORT, 0, 65535);
        this.httpHost = s.text(HTTP_HOST).orElse("0.0.0.0");
        this.storeStatistics = s.flag(METRICS_STORE_STATISTICS, true);
        this.statisticsInterval =
                s.duration(METRICS_STATISTICS_INTERVAL, Duration.ofSeconds(1), Duration.ofHours(1))
                        .orElse(DEFAULT_STATISTICS_INTERVAL);
    }

    /**
     * Reads and checks every setting.
     *
     * @throws SettingsException naming the first bad setting
     */
    static RelayConfig of(Settings settings) {
        return new RelayConfig(settings);
    }

    /**
     * The relay builder with every setting applied; the engine checks the combinations (for example
     * a lease it cannot renew in time).
     */
    Relay.Builder apply(Relay.Builder b) {
        owner.ifPresent(b::owner);
        minBatchSize.ifPresent(b::minBatchSize);
        maxInFlight.ifPresent(b::maxInFlight);
        return b.batchSize(batchSize)
                .workers(workers)
                .deliveryTimeout(deliveryTimeout)
                .lease(lease)
                .memberLease(memberLease)
                .maxAttempts(maxAttempts)
                .backoff(
                        backoffBase.equals(DEFAULT_BACKOFF_BASE)
                                        && backoffMax.equals(DEFAULT_BACKOFF_MAX)
                                ? Backoff.DEFAULT
                                : Backoff.exponential(backoffBase, backoffMax))
                .pollInterval(pollInterval)
                .shutdownTimeout(shutdownTimeout);
    }

    /** One line for the log: every relay setting, no secrets. */
    String describe() {
        return "batch-size="
                + batchSize
                + minBatchSize.map(n -> " min-batch-size=" + n).orElse("")
                + maxInFlight.map(n -> " max-in-flight=" + n).orElse("")
                + " workers="
                + workers
                + " delivery-timeout="
                + Settings.format(deliveryTimeout)
                + " lease="
                + Settings.format(lease)
                + " max-attempts="
                + maxAttempts
                + " backoff="
                + Settings.format(backoffBase)
                + ".."
                + Settings.format(backoffMax)
                + " poll-interval="
                + Settings.format(pollInterval)
                + " shutdown-timeout="
                + Settings.format(shutdownTimeout)
                + " max-publish-stall="
                + Settings.format(maxPublishStall);
    }
}
