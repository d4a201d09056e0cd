package io.outbox4j.relay;

import io.outbox4j.api.Backoff;
import io.outbox4j.cli.internal.Settings;
import io.outbox4j.cli.internal.SettingsException;
import io.outbox4j.cli.internal.StoreConnection;
import io.outbox4j.engine.Relay;
import io.outbox4j.engine.RelaySetting;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
    static final String OWNER = key(RelaySetting.OWNER);
    static final String MIN_BATCH_SIZE = key(RelaySetting.MIN_BATCH_SIZE);
    static final String MAX_IN_FLIGHT = key(RelaySetting.MAX_IN_FLIGHT);
    static final String BACKOFF_BASE = key(RelaySetting.BACKOFF_BASE);
    static final String BACKOFF_MAX = key(RelaySetting.BACKOFF_MAX);
    static final String MAX_PUBLISH_STALL = key(RelaySetting.MAX_PUBLISH_STALL);
    static final String MEMBERSHIP = key(RelaySetting.MEMBERSHIP);
    static final String HTTP_PORT = "http.port";
    static final String HTTP_HOST = "http.host";
    static final String METRICS_STORE_STATISTICS = "metrics.store-statistics";
    static final String METRICS_STATISTICS_INTERVAL = "metrics.statistics-interval";
    static final String LOG_LEVEL = "log.level";
    static final String CONSOLE_ENABLED = "console.enabled";
    static final String CONSOLE_WRITE_ENABLED = "console.write-enabled";
    static final String CONSOLE_PAYLOADS_ENABLED = "console.payloads-enabled";
    static final String CONSOLE_USER = "console.user";
    static final String CONSOLE_PASSWORD = "console.password";
    static final String CONSOLE_PAGE_SIZE = "console.page-size";

    /** The HTTP port when none is set. */
    static final int DEFAULT_HTTP_PORT = 8080;

    /** Dead letters per console page when none is set. */
    static final int DEFAULT_CONSOLE_PAGE_SIZE = 50;

    /** How long store statistics are reused before /metrics reads them again. */
    static final Duration DEFAULT_STATISTICS_INTERVAL = Duration.ofSeconds(15);

    /** The first retry delay of the default backoff (the engine's {@link Backoff#DEFAULT}). */
    static final Duration DEFAULT_BACKOFF_BASE =
            RelaySetting.BACKOFF_BASE.defaultValue().orElseThrow();

    /** The longest retry delay of the default backoff. */
    static final Duration DEFAULT_BACKOFF_MAX =
            RelaySetting.BACKOFF_MAX.defaultValue().orElseThrow();

    static final List<String> KEYS;

    static {
        List<String> keys = new ArrayList<>(StoreConnection.KEYS);
        keys.addAll(
                List.of(
                        STORE_CREATE_SCHEMA,
                        PUBLISHER_URI,
                        PUBLISHER_AMQP_EXCHANGE,
                        PUBLISHER_SQS_REGION,
                        HTTP_PORT,
                        HTTP_HOST,
                        METRICS_STORE_STATISTICS,
                        METRICS_STATISTICS_INTERVAL,
                        LOG_LEVEL,
                        CONSOLE_ENABLED,
                        CONSOLE_WRITE_ENABLED,
                        CONSOLE_PAYLOADS_ENABLED,
                        CONSOLE_USER,
                        CONSOLE_PASSWORD,
                        CONSOLE_PAGE_SIZE));
        for (RelaySetting<?> setting : RelaySetting.all()) {
            keys.add(key(setting)); // every relay.* setting
        }
        KEYS = List.copyOf(keys);
    }

    static final List<String> SECTIONS =
            List.of("store.", "publisher.", "relay.", "http.", "metrics.", "log.", "console.");

    final Settings settings;
    final boolean createSchema;
    final String publisherUri;
    final Optional<String> owner;
    final int batchSize;
    final Optional<Integer> minBatchSize;
    final Optional<Integer> maxInFlight;
    final Duration wakeUpWindow;
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
    final boolean membership;
    final int httpPort;
    final String httpHost;
    final boolean storeStatistics;
    final Duration statisticsInterval;
    final Console console;

    /**
     * The web console's settings (docs/console.md): off unless enabled, read-only unless write
     * actions are enabled, and those (and payloads) only with a user and password.
     */
    record Console(
            boolean enabled,
            boolean writeEnabled,
            boolean payloadsEnabled,
            Optional<String> user,
            Optional<String> password,
            int pageSize) {
        String describe() {
            if (!enabled) {
                return "off";
            }
            return "/console/ "
                    + (writeEnabled ? "replay and discard enabled" : "read-only")
                    + (payloadsEnabled ? ", payloads on request" : "")
                    + (user.isPresent()
                            ? ", basic authentication as " + user.get()
                            : ", no authentication");
        }
    }

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
        this.batchSize = integer(s, RelaySetting.BATCH_SIZE);
        this.minBatchSize = s.optionalInteger(MIN_BATCH_SIZE, 1, batchSize);
        this.maxInFlight =
                s.optionalInteger(
                        MAX_IN_FLIGHT, batchSize, RelaySetting.MAX_IN_FLIGHT.max().orElseThrow());
        this.wakeUpWindow = duration(s, RelaySetting.WAKE_UP_WINDOW);
        this.workers = integer(s, RelaySetting.WORKERS);
        this.deliveryTimeout = duration(s, RelaySetting.DELIVERY_TIMEOUT);
        this.lease = duration(s, RelaySetting.LEASE);
        this.memberLease = duration(s, RelaySetting.MEMBER_LEASE);
        this.maxAttempts = integer(s, RelaySetting.MAX_ATTEMPTS);
        this.backoffBase = duration(s, RelaySetting.BACKOFF_BASE);
        this.backoffMax = duration(s, RelaySetting.BACKOFF_MAX);
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
        this.pollInterval = duration(s, RelaySetting.POLL_INTERVAL);
        this.shutdownTimeout = duration(s, RelaySetting.SHUTDOWN_TIMEOUT);
        this.maxPublishStall = duration(s, RelaySetting.MAX_PUBLISH_STALL);
        this.membership = s.flag(MEMBERSHIP, RelaySetting.MEMBERSHIP.defaultValue().orElseThrow());
        this.httpPort = s.integer(HTTP_PORT, DEFAULT_HTTP_PORT, 0, 65535);
        this.httpHost = s.text(HTTP_HOST).orElse("0.0.0.0");
        this.storeStatistics = s.flag(METRICS_STORE_STATISTICS, true);
        this.statisticsInterval =
                s.duration(METRICS_STATISTICS_INTERVAL, Duration.ofSeconds(1), Duration.ofHours(1))
                        .orElse(DEFAULT_STATISTICS_INTERVAL);
        this.console = console(s);
    }

    private static Console console(Settings s) {
        boolean enabled = s.flag(CONSOLE_ENABLED, false);
        boolean write = s.flag(CONSOLE_WRITE_ENABLED, false);
        boolean payloads = s.flag(CONSOLE_PAYLOADS_ENABLED, false);
        Optional<String> user = s.text(CONSOLE_USER);
        Optional<String> password = s.text(CONSOLE_PASSWORD);
        int pageSize = s.integer(CONSOLE_PAGE_SIZE, DEFAULT_CONSOLE_PAGE_SIZE, 1, 500);
        if (user.isPresent() != password.isPresent()) {
            throw new SettingsException(
                    CONSOLE_USER
                            + " and "
                            + CONSOLE_PASSWORD
                            + " go together: set both or neither");
        }
        if (user.isPresent() && (user.get().contains(":") || user.get().isBlank())) {
            throw new SettingsException(CONSOLE_USER + " must not be blank nor contain ':'");
        }
        if (password.isPresent() && password.get().length() < 8) {
            throw new SettingsException(
                    CONSOLE_PASSWORD
                            + " must have at least 8 characters ("
                            + s.source(CONSOLE_PASSWORD)
                            + ")");
        }
        if ((write || payloads) && user.isEmpty()) {
            throw new SettingsException(
                    (write ? CONSOLE_WRITE_ENABLED : CONSOLE_PAYLOADS_ENABLED)
                            + "=true needs "
                            + CONSOLE_USER
                            + " and "
                            + CONSOLE_PASSWORD
                            + ": the console never writes nor shows payloads without authentication");
        }
        if ((write || payloads || user.isPresent()) && !enabled) {
            throw new SettingsException(
                    "console.* settings are given but "
                            + CONSOLE_ENABLED
                            + " is not true: set it to serve the console on the HTTP port");
        }
        return new Console(enabled, write, payloads, user, password, pageSize);
    }

    /** The file key of a relay setting: {@code relay.<key>}. */
    static String key(RelaySetting<?> setting) {
        return "relay." + setting.key();
    }

    /**
     * The help lines of the {@code relay.*} settings, from their one definition: key, meaning,
     * bounds and default.
     */
    static String relayHelp() {
        StringBuilder help = new StringBuilder();
        for (RelaySetting<?> setting : RelaySetting.all()) {
            if (help.length() > 0) {
                help.append('\n');
            }
            help.append(String.format(Locale.ROOT, "  %-27s %s", key(setting), setting.doc()));
            if (!setting.bounds().isEmpty()) {
                help.append(String.format(Locale.ROOT, "\n  %-27s %s", "", setting.bounds()));
            }
            help.append(" [").append(setting.defaultText()).append(']');
        }
        return help.toString();
    }

    private static int integer(Settings s, RelaySetting<Integer> setting) {
        return s.integer(
                key(setting),
                setting.defaultValue().orElseThrow(),
                setting.min().orElseThrow(),
                setting.max().orElseThrow());
    }

    private static Duration duration(Settings s, RelaySetting<Duration> setting) {
        return s.duration(key(setting), setting.min().orElseThrow(), setting.max().orElseThrow())
                .orElse(setting.defaultValue().orElseThrow());
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
                .wakeUpWindow(wakeUpWindow)
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
                .shutdownTimeout(shutdownTimeout)
                .membership(membership);
    }

    /** One line for the log: every relay setting, no secrets. */
    String describe() {
        return "batch-size="
                + batchSize
                + minBatchSize.map(n -> " min-batch-size=" + n).orElse("")
                + maxInFlight.map(n -> " max-in-flight=" + n).orElse("")
                + " wake-up-window="
                + Settings.format(wakeUpWindow)
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
                + Settings.format(maxPublishStall)
                + " membership="
                + membership;
    }
}
