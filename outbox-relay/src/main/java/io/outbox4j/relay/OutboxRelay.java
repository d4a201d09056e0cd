package io.outbox4j.relay;

import io.outbox4j.api.Observation.Outcome;
import io.outbox4j.cli.internal.Settings;
import io.outbox4j.cli.internal.SettingsException;
import io.outbox4j.cli.internal.StoreConnection;
import io.outbox4j.console.OutboxConsole;
import io.outbox4j.engine.Relay;
import io.outbox4j.micrometer.OutboxMetrics;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standalone outbox4j relay: one process that relays one outbox (a table or collection) to one
 * broker, configured by a properties file ({@code --config relay.properties}) and/or environment
 * variables ({@code OUTBOX4J_STORE_URL}, {@code OUTBOX4J_PUBLISHER_URI}, …).
 *
 * <p>It serves {@code /health/live}, {@code /health/ready} and {@code /metrics} (Prometheus) over
 * HTTP, logs one line per event, and on SIGTERM or SIGINT drains: it stops claiming, lets the
 * publisher calls in flight finish (up to {@code relay.shutdown-timeout}), records their outcomes,
 * gives back the messages it had not started, and exits 0. {@code docs/relay.md} describes every
 * setting and a Kubernetes deployment.
 *
 * <p>Exit codes: {@value #OK} stopped by a signal after draining; {@value #FAILED} the relay could
 * not start or failed while running; {@value #USAGE} bad arguments or settings.
 */
public final class OutboxRelay {
    /** Exit code: stopped by a signal after draining (or {@code --check} passed). */
    public static final int OK = 0;

    /**
     * Exit code: the relay could not start (store, publisher, HTTP port) or failed while running.
     */
    public static final int FAILED = 1;

    /** Exit code: bad arguments or settings; nothing was started. */
    public static final int USAGE = 2;

    static final String HELP =
            String.join(
                    "\n",
                    "Usage: outbox4j relay [--config FILE] [--check]",
                    "",
                    "Relays one outbox4j outbox to one broker until SIGTERM or SIGINT, then drains and exits 0.",
                    "Settings come from the properties FILE and from environment variables (OUTBOX4J_ + the key",
                    "in upper case, dots and dashes as underscores: relay.batch-size -> OUTBOX4J_RELAY_BATCH_SIZE);",
                    "the environment wins.",
                    "",
                    "  --config FILE   read settings from a properties file",
                    "  --check         check the settings, print them (without secrets) and exit",
                    "  --help          print this help",
                    "",
                    "Settings (default in brackets):",
                    "  store.url                   jdbc:postgresql://host:5432/db, jdbc:mariadb://…, jdbc:mysql://…,",
                    "                              jdbc:h2:…, or mongodb://host:27017/db (required)",
                    "  store.user, store.password  database credentials (JDBC)",
                    "  store.table                 outbox table or collection [outbox_message]",
                    "  store.database              MongoDB database, if the URI names none",
                    "  store.pool-size             JDBC connections [workers + 2]",
                    "  store.connect-timeout       ["
                            + Settings.format(StoreConnection.DEFAULT_CONNECT_TIMEOUT)
                            + "]",
                    "  store.create-schema         create the table/indexes if absent [false]",
                    "  publisher.uri               kafka://host:9092[,host:9092], amqp://user:pass@host:5672/vhost,",
                    "                              sqs://host:port (plain HTTP), sqs+https://host or sqs://aws (required)",
                    "  publisher.kafka.*           Kafka producer properties, e.g. publisher.kafka.security.protocol",
                    "  publisher.amqp.exchange     RabbitMQ exchange [the default exchange: one queue per topic]",
                    "  publisher.sqs.region        AWS region [AWS_REGION]",
                    RelayConfig.relayHelp(),
                    "  http.port                   health and metrics port, 0 for any free one ["
                            + RelayConfig.DEFAULT_HTTP_PORT
                            + "]",
                    "  http.host                   address to listen on [0.0.0.0]",
                    "  metrics.store-statistics    include the store's counts in /metrics [true]",
                    "  metrics.statistics-interval how long those counts are reused ["
                            + Settings.format(RelayConfig.DEFAULT_STATISTICS_INTERVAL)
                            + "]",
                    "  log.level                   error, warn, info, debug or trace [info]",
                    "  console.enabled             serve the web console under /console/ on the HTTP port [false]",
                    "  console.write-enabled       offer replay and discard (needs console.user) [false]",
                    "  console.payloads-enabled    show one message's payload on request (needs console.user) [false]",
                    "  console.user, console.password",
                    "                              HTTP Basic credentials guarding every console page",
                    "  console.page-size           dead letters per console page ["
                            + RelayConfig.DEFAULT_CONSOLE_PAGE_SIZE
                            + "]",
                    "",
                    "Exit codes: 0 stopped by a signal after draining; 1 could not start or failed; 2 bad settings.",
                    "");

    private final RelayConfig config;
    private final Map<String, String> env;
    private final Logger log = LoggerFactory.getLogger(OutboxRelay.class);
    private final CountDownLatch stop = new CountDownLatch(1);
    private final AtomicReference<String> stopReason = new AtomicReference<>();
    private final AtomicInteger exitCode = new AtomicInteger(OK);
    private final AtomicBoolean running = new AtomicBoolean();
    private final CountDownLatch stopped = new CountDownLatch(1);

    private OutboxRelay(RelayConfig config, Map<String, String> env) {
        this.config = config;
        this.env = env;
    }

    /**
     * Runs the relay until SIGTERM or SIGINT and exits with its exit code.
     *
     * @param args {@code --config FILE}, {@code --check}, {@code --help}
     */
    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        System.exit(run(args, System.getenv(), out, err));
    }

    /** Reads the settings and runs; returns the exit code (never exits the JVM). */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        Optional<Path> file = Optional.empty();
        boolean check = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                out.print(HELP);
                return OK;
            } else if (a.equals("--check")) {
                check = true;
            } else if (a.equals("--config") && i + 1 < args.length) {
                file = Optional.of(Path.of(args[++i]));
            } else if (a.startsWith("--config=")) {
                file = Optional.of(Path.of(a.substring("--config=".length())));
            } else {
                return usage(
                        err,
                        a.equals("--config")
                                ? "--config needs a file"
                                : "unknown argument '" + a + "'");
            }
        }
        RelayConfig config;
        try {
            Settings settings =
                    file.isPresent()
                            ? Settings.load(file.get(), env)
                            : Settings.fromEnvironment(env);
            String level =
                    settings.text(RelayConfig.LOG_LEVEL).orElse("info").toLowerCase(Locale.ROOT);
            if (!level.matches("error|warn|info|debug|trace")) {
                throw new SettingsException(
                        RelayConfig.LOG_LEVEL
                                + " must be error, warn, info, debug or trace, but was '"
                                + level
                                + "' ("
                                + settings.source(RelayConfig.LOG_LEVEL)
                                + ")");
            }
            if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
                System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", level);
            }
            config = RelayConfig.of(settings);
        } catch (SettingsException e) {
            return usage(err, e.getMessage());
        }
        if (check) {
            out.println("settings are valid");
            out.println(
                    "store:     "
                            + StoreConnection.mask(
                                    config.settings.text(StoreConnection.URL).orElse("")));
            out.println("publisher: " + StoreConnection.mask(config.publisherUri));
            out.println("relay:     " + config.describe());
            out.println("http:      " + config.httpHost + ":" + config.httpPort);
            out.println("console:   " + config.console.describe());
            return OK;
        }
        return new OutboxRelay(config, env).runUntilStopped();
    }

    private static int usage(PrintStream err, @Nullable String message) {
        err.println("outbox4j relay: " + message);
        err.println("Run 'outbox4j relay --help' for the settings.");
        return USAGE;
    }

    private int runUntilStopped() {
        Thread.setDefaultUncaughtExceptionHandler(
                (t, e) -> {
                    log.error("thread {} died: {}", t.getName(), e.toString(), e);
                    if (t.getName().startsWith("outbox4j-relay-")) {
                        requestStop("the relay failed: " + e, FAILED);
                    }
                });
        ExecutorService storeThread =
                Executors.newSingleThreadExecutor(
                        r -> {
                            Thread t = new Thread(r, "outbox4j-relay-store-check");
                            t.setDaemon(true);
                            return t;
                        });
        StoreConnection store = null;
        Publishers.Opened publisher = null;
        Relay relay = null;
        HealthServer http = null;
        RelayMetrics metrics = null;
        try {
            store = StoreConnection.open(config.settings, Math.max(4, config.workers + 2), false);
            if (config.createSchema) {
                store.createSchema();
                log.info("schema ready: {}", store.describe());
            }
            publisher = Publishers.open(config.publisherUri, config.settings, env);
            metrics =
                    new RelayMetrics(
                            store.admin(),
                            config.storeStatistics,
                            config.statisticsInterval,
                            Clock.systemUTC());
            OutboxMetrics binder = metrics.binder();
            try {
                relay =
                        config.apply(
                                        Relay.builder(
                                                binder.store(store.store()), publisher.publisher()))
                                .observer(binder)
                                .build();
            } catch (IllegalArgumentException e) {
                log.error("bad relay settings: {}", e.getMessage());
                return USAGE;
            }
            binder.relay(relay);
            RelayMetrics meters = metrics;
            Relay r = relay;
            StoreProbe probe = new StoreProbe(store.admin(), storeThread);
            http =
                    new HealthServer(
                            config.httpHost,
                            config.httpPort,
                            () ->
                                    exitCode.get() == FAILED
                                            ? Optional.of(String.valueOf(stopReason.get()))
                                            : Optional.empty(),
                            () -> running.get() ? ready(probe, r) : Optional.of(notRunning()),
                            meters::render,
                            console(store, r));
            installSignalHandlers();
            log.info(
                    "outbox4j relay starting: store {}, publisher {}, {}, http {}:{}",
                    store.describe(),
                    publisher.description(),
                    config.describe(),
                    config.httpHost,
                    http.port());
            relay.start();
            running.set(true);
            stop.await();
            running.set(false);
            long start = System.nanoTime();
            log.info(
                    "{}: draining (waiting up to {} for publisher calls in flight)",
                    stopReason.get(),
                    Settings.format(config.shutdownTimeout));
            r.close();
            relay = null;
            log.info(
                    "relay drained in {} ms: {} completed, {} released, {} dead-lettered, {} given back untried"
                            + " since start",
                    (System.nanoTime() - start) / 1_000_000,
                    metrics.count(Outcome.COMPLETED),
                    metrics.count(Outcome.RELEASED),
                    metrics.count(Outcome.DEAD_LETTERED),
                    metrics.count(Outcome.ABANDONED));
            return exitCode.get();
        } catch (SettingsException e) {
            log.error("bad settings: {}", e.getMessage());
            return USAGE;
        } catch (IOException e) {
            log.error(
                    "cannot listen on {}:{} for health and metrics: {}",
                    config.httpHost,
                    config.httpPort,
                    e.toString());
            return FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return FAILED;
        } catch (RuntimeException e) {
            log.error(
                    "the relay could not start: {}",
                    StoreConnection.mask(StoreConnection.rootMessage(e)),
                    e);
            return FAILED;
        } finally {
            running.set(false);
            if (relay != null) {
                relay.close();
            }
            if (metrics != null) {
                metrics.close(); // after the relay: no observation arrives later
            }
            if (publisher != null) {
                publisher.close();
            }
            if (store != null) {
                store.close();
            }
            if (http != null) {
                http.close();
            }
            storeThread.shutdownNow();
            log.info("outbox4j relay stopped");
            stopped.countDown();
        }
    }

    /** The web console over the store's admin port, when enabled; its relays row is this relay. */
    private Optional<ConsoleHandler> console(StoreConnection store, Relay r) {
        RelayConfig.Console c = config.console;
        if (!c.enabled()) {
            return Optional.empty();
        }
        OutboxConsole.Builder b =
                OutboxConsole.builder(store.admin())
                        .title("outbox4j relay")
                        .pageSize(c.pageSize())
                        .writeEnabled(c.writeEnabled())
                        .payloadsEnabled(c.payloadsEnabled())
                        .relays(() -> List.of(status(r, config.owner.orElse("this relay"))));
        if (c.user().isPresent() && c.password().isPresent()) {
            b.basicAuthentication(c.user().get(), c.password().get());
        }
        return Optional.of(new ConsoleHandler(b.build()));
    }

    /** This relay as the console's relays section shows it. */
    static OutboxConsole.RelayStatus status(Relay r, String owner) {
        Instant now = Instant.now();
        Map<String, String> details = new LinkedHashMap<>();
        details.put(
                "last claim",
                r.lastClaim()
                        .map(t -> Settings.format(Duration.between(t, now)) + " ago")
                        .orElse("none yet"));
        Relay.Publishing p = r.publishing();
        details.put(
                "publishing",
                p.stalledFor(now).map(d -> "stalled for " + Settings.format(d)).orElse("ok")
                        + (p.failedCallsInARow() > 0
                                ? ", " + p.failedCallsInARow() + " failed call(s) in a row"
                                : ""));
        r.membership()
                .ifPresent(
                        m -> {
                            details.put("buckets", Integer.toString(m.buckets().size()));
                            details.put("members", String.join(", ", m.members()));
                        });
        String name = r.membership().map(m -> m.member()).orElse(owner);
        return new OutboxConsole.RelayStatus(name, r.state().name(), details);
    }

    /**
     * Ready while the store answers and publishing has not been stalled for {@code
     * relay.max-publish-stall} (a stopped broker fails it even with one message in flight).
     */
    private Optional<String> ready(StoreProbe probe, Relay r) {
        Optional<String> store = probe.check();
        if (store.isPresent()) {
            return store;
        }
        return r.publishing()
                .problem(Instant.now(), config.maxPublishStall)
                .map(problem -> problem + " (" + RelayConfig.MAX_PUBLISH_STALL + ")");
    }

    private String notRunning() {
        String reason = stopReason.get();
        return reason == null ? "the relay is starting" : "the relay is stopping (" + reason + ")";
    }

    private void requestStop(String reason, int code) {
        if (stopReason.compareAndSet(null, reason)) {
            if (code != OK) {
                exitCode.set(code);
            }
            running.set(false);
            stop.countDown();
        } else {
            log.info("{} while stopping: already draining", reason);
        }
    }

    private void installSignalHandlers() {
        boolean term = Signals.handle("TERM", () -> requestStop("SIGTERM", OK));
        boolean intr = Signals.handle("INT", () -> requestStop("SIGINT", OK));
        if (!term || !intr) {
            // Without signal handlers the JVM shuts down on a signal: drain inside a shutdown hook
            // (the exit code is then the JVM's, 143 for SIGTERM).
            Runtime.getRuntime()
                    .addShutdownHook(
                            new Thread(
                                    () -> {
                                        requestStop("JVM shutdown", OK);
                                        try {
                                            stopped.await(
                                                    config.shutdownTimeout
                                                            .plus(Duration.ofSeconds(10))
                                                            .toMillis(),
                                                    java.util.concurrent.TimeUnit.MILLISECONDS);
                                        } catch (InterruptedException e) {
                                            Thread.currentThread().interrupt();
                                        }
                                    },
                                    "outbox4j-relay-shutdown"));
        }
    }
}
