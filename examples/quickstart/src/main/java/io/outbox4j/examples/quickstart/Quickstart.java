package io.outbox4j.examples.quickstart;

import io.outbox4j.api.Message;
import io.outbox4j.engine.Relay;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The outbox4j quickstart: an order service writes orders and their events in one transaction each,
 * from several threads; relays dispatch the outbox to a broker; a consumer reads the events back.
 * The summary says whether every event arrived, how many duplicates there were, whether per-key
 * order held, and how long events took from commit to broker acknowledgement.
 *
 * <p>Exit codes: 0 when nothing was lost or reordered, 1 otherwise, 2 for a bad command line.
 */
public final class Quickstart {
    static final String MODULE = "orders";

    /** The prefix of warm-up order ids and customers, which the figures leave out. */
    static final String WARM_UP = "warmup-";

    private final Options options;
    private final PrintStream out;
    private final PrintStream err;
    private final String runId = UUID.randomUUID().toString().substring(0, 8);

    private Quickstart(Options options, PrintStream out, PrintStream err) {
        this.options = options;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the quickstart and exits with its status.
     *
     * @param args the command line; {@code --help} lists the options
     */
    public static void main(String[] args) {
        int status = run(args, System.out, System.err);
        System.exit(status);
    }

    /**
     * Runs the quickstart.
     *
     * @param args the command line
     * @param out where the summary goes
     * @param err where progress and errors go
     * @return the exit status: 0 all events arrived in order, 1 something was lost or reordered, 2
     *     bad usage
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (Options.BadOption e) {
            err.println("error: " + e.getMessage());
            err.println();
            err.print(Options.USAGE);
            return 2;
        }
        if (options.help) {
            out.print(Options.USAGE);
            return 0;
        }
        return new Quickstart(options, out, err).run();
    }

    private int run() {
        String topic = "quickstart.orders." + runId;
        try (StoreBackend backend = openStore();
                Transport transport = openTransport()) {
            transport.prepare(topic, Duration.ofSeconds(options.timeoutSeconds));
            Tally tally = new Tally();
            transport.startConsumer(topic, tally);
            TimingPublisher publisher = new TimingPublisher(transport.publisher());

            List<Relay> relays = new ArrayList<>();
            for (int i = 0; i < options.relays; i++) {
                // tag::relay[]
                Relay relay =
                        Relay.builder(backend.store(), publisher)
                                .owner("quickstart-relay-" + i)
                                .batchSize(250)
                                .workers(4)
                                .deliveryTimeout(Duration.ofSeconds(10))
                                .pollInterval(Duration.ofMillis(500))
                                .build();
                relay.start();
                // end::relay[]
                relays.add(relay);
            }

            err.println(
                    "outbox4j quickstart: "
                            + options.messages
                            + " orders from "
                            + options.writers
                            + " writers over "
                            + options.keys
                            + " customers; "
                            + backend.describe()
                            + " -> "
                            + transport.describe()
                            + "; "
                            + options.relays
                            + " relay(s); "
                            + (options.rate == 0
                                    ? "writing as fast as the writers can"
                                    : "writing " + options.rate + " orders/s"));
            warmUp(backend, topic, relays, publisher);
            Map<String, Long> commitNanos = new ConcurrentHashMap<>();
            AtomicLong written = new AtomicLong();
            long start = System.nanoTime();
            long writeEnd;
            long readEnd;
            Progress progress =
                    new Progress(
                            err,
                            onTerminal(),
                            options.messages,
                            written::get,
                            publisher.published::get,
                            tally::distinct);
            // the most events committed and not yet published, sampled every 50 ms
            AtomicLong maxBacklog = new AtomicLong();
            java.util.concurrent.ScheduledExecutorService sampler =
                    Executors.newSingleThreadScheduledExecutor(
                            r -> {
                                Thread t = new Thread(r, "quickstart-backlog");
                                t.setDaemon(true);
                                return t;
                            });
            var unused = // the sampler cannot fail; it stops with the example
                    sampler.scheduleAtFixedRate(
                            () ->
                                    maxBacklog.accumulateAndGet(
                                            written.get() - publisher.published.get(), Math::max),
                            50,
                            50,
                            TimeUnit.MILLISECONDS);
            try {
                writeOrders(
                        backend,
                        topic,
                        relays,
                        commitNanos,
                        written,
                        start,
                        options.messages,
                        runId + "-",
                        options.rate);
                writeEnd = System.nanoTime();
                readEnd = awaitReadBack(tally, commitNanos.keySet());
            } finally {
                sampler.shutdownNow();
                progress.close();
            }
            relays.forEach(Relay::close);

            long orders = backend.orderCount(runId + "-");
            long missing = commitNanos.keySet().stream().filter(id -> !tally.saw(id)).count();
            double seconds = (readEnd - start) / 1e9;
            long[] latencies = latenciesMicros(commitNanos, publisher.ackNanos);
            boolean ok = missing == 0 && tally.violations() == 0 && orders == written.get();

            out.println();
            out.println("outbox4j quickstart summary");
            out.println("  store                 " + backend.describe());
            out.println("  publisher             " + transport.describe());
            out.println("  relays                " + options.relays);
            out.println(
                    "  warm-up               "
                            + options.warmup
                            + " orders first, left out of every figure below (--warmup)");
            out.println("  orders committed      " + orders);
            out.println("  events written        " + written.get());
            out.println("  events published      " + publisher.published.get());
            out.println("  events read back      " + tally.distinct());
            out.println("  missing               " + missing);
            out.println("  duplicates            " + tally.duplicates());
            out.println("  order violations      " + tally.violations());
            double writeRate = written.get() / ((writeEnd - start) / 1e9);
            double relayRate = publisher.rate();
            out.println(
                    String.format(
                            Locale.ROOT,
                            "  write throughput      %.0f orders/s (%s)",
                            writeRate,
                            options.rate == 0
                                    ? "--rate max: as fast as the writers can"
                                    : "paced at --rate " + options.rate));
            out.println(
                    String.format(
                            Locale.ROOT,
                            "  relay throughput      %.0f events/s (first to last broker ack)",
                            relayRate));
            out.println(
                    String.format(
                            Locale.ROOT,
                            "  end-to-end throughput %.0f events/s (commit to read back)",
                            tally.distinct() / seconds));
            out.println(
                    String.format(
                            Locale.ROOT,
                            "  commit->publish       p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                            percentile(latencies, 50) / 1000.0,
                            percentile(latencies, 99) / 1000.0,
                            percentile(latencies, 100) / 1000.0));
            out.println(
                    "                        (from each order's commit to the broker's ack of its"
                            + " event:");
            out.println(
                    "                        wake-up, claim, publish; plus any wait behind"
                            + " events committed before it)");
            // More events waiting at some moment than the relay publishes in a quarter of a
            // second: the writers committed faster than the relay published, and the latency
            // above is mostly that wait.
            if (maxBacklog.get() > Math.max(50, relayRate / 4)) {
                out.println(
                        String.format(
                                Locale.ROOT,
                                "  note                  the writers outran the relay: up to %d events"
                                        + " waited to be published (writers %.0f/s, relay %.0f/s);"
                                        + " commit->publish above is mostly that wait. A lower"
                                        + " --rate shows the relay's own latency",
                                maxBacklog.get(),
                                writeRate,
                                relayRate));
            }
            out.println(
                    "  result                "
                            + (ok
                                    ? "OK: every event arrived, per-key order held"
                                    : "FAILED: events were lost, reordered, or orders and events disagree"));
            return ok ? 0 : 1;
        } catch (RuntimeException e) {
            err.println();
            err.println("error: " + e.getMessage());
            return 1;
        }
    }

    private StoreBackend openStore() {
        if (options.store.toLowerCase(Locale.ROOT).startsWith("mongodb")) {
            return new MongoBackend(options.store);
        }
        return new JdbiBackend(options.store, options.writers + 2 * options.relays + 2);
    }

    private Transport openTransport() {
        if (options.publisher == null) {
            return KafkaTransport.embedded();
        }
        String scheme = options.publisher.getScheme().toLowerCase(Locale.ROOT);
        if (scheme.equals("kafka")) {
            int port = options.publisher.getPort() < 0 ? 9092 : options.publisher.getPort();
            return KafkaTransport.external(options.publisher.getHost() + ":" + port);
        }
        if (scheme.startsWith("amqp")) {
            return new RabbitMqTransport(options.publisher.toString());
        }
        return SqsTransport.of(options.publisher);
    }

    /**
     * Each writer owns a subset of customers, so the events of one customer are committed one after
     * the other and carry an increasing per-customer sequence number.
     */
    private void writeOrders(
            StoreBackend backend,
            String topic,
            List<Relay> relays,
            Map<String, Long> commitNanos,
            AtomicLong written,
            long start,
            int count,
            String idPrefix,
            int rate) {
        // Each writer commits its share at rate / writers orders a second, each order at its due
        // time (one that fell behind catches up); rate 0: as fast as it can.
        double nanosPerOrder = rate == 0 ? 0 : 1e9 * options.writers / rate;
        ExecutorService pool = Executors.newFixedThreadPool(options.writers);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < options.writers; w++) {
                int writer = w;
                futures.add(
                        pool.submit(
                                () -> {
                                    long mine = 0;
                                    for (int i = 0; i < count; i++) {
                                        int customer = i % options.keys;
                                        if (customer % options.writers != writer) {
                                            continue;
                                        }
                                        pace(start + (long) (mine++ * nanosPerOrder));
                                        String orderId = idPrefix + i;
                                        StoreBackend.Order order =
                                                new StoreBackend.Order(
                                                        orderId,
                                                        (idPrefix.startsWith(WARM_UP)
                                                                        ? WARM_UP
                                                                        : "")
                                                                + "customer-"
                                                                + customer,
                                                        100 + i % 900);
                                        backend.placeOrder(
                                                order, event(topic, order, i / options.keys));
                                        commitNanos.put(orderId, System.nanoTime());
                                        written.incrementAndGet();
                                        relays.forEach(Relay::wakeUp);
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while writing orders", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("an order write failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Writes {@code --warmup} orders as fast as the writers can, of customers of their own, and
     * waits until they are published: the JVM compiles the writers' and the relay's code paths
     * first, which on a small machine otherwise puts its first seconds in the figures. Their events
     * go to the same topic; the tally and the timing leave them out.
     */
    private void warmUp(
            StoreBackend backend, String topic, List<Relay> relays, TimingPublisher publisher) {
        if (options.warmup == 0) {
            return;
        }
        writeOrders(
                backend,
                topic,
                relays,
                new ConcurrentHashMap<>(),
                new AtomicLong(),
                System.nanoTime(),
                options.warmup,
                WARM_UP + runId + "-",
                0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.timeoutSeconds);
        while (publisher.warmUpPublished.get() < options.warmup && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Waits until a writer's next order is due. */
    private static void pace(long dueNanos) throws InterruptedException {
        long wait = dueNanos - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }

    // tag::event[]
    static Message event(String topic, StoreBackend.Order order, long customerSeq) {
        return Message.builder()
                .id(order.id()) // the downstream idempotency key
                .topic(topic)
                .key(order.customer()) // per-customer ordering
                .module(MODULE)
                .contentType("application/json")
                .payload(
                        "{\"orderId\":\""
                                + order.id()
                                + "\",\"customer\":\""
                                + order.customer()
                                + "\",\"amount\":"
                                + order.amount()
                                + "}")
                .header(Transport.SEQ_HEADER, Long.toString(customerSeq))
                .build();
    }

    // end::event[]

    private long awaitReadBack(Tally tally, java.util.Set<String> ids) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.timeoutSeconds);
        while (System.nanoTime() < deadline) {
            if (tally.distinct() >= ids.size() && ids.stream().allMatch(tally::saw)) {
                return System.nanoTime();
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return System.nanoTime();
    }

    private static long[] latenciesMicros(
            Map<String, Long> commitNanos, Map<String, Long> ackNanos) {
        long[] out =
                commitNanos.entrySet().stream()
                        .filter(e -> ackNanos.containsKey(e.getKey()))
                        .mapToLong(
                                e -> Math.max(0, ackNanos.get(e.getKey()) - e.getValue()) / 1_000)
                        .toArray();
        Arrays.sort(out);
        return out;
    }

    private static long percentile(long[] sorted, int p) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    /** Whether the example runs in a terminal, where progress redraws its line. */
    // Built for Java 17, which has no Console.isTerminal(); on Java 22 and newer a redirected run
    // also gets a console, and its progress lines end in carriage returns.
    @SuppressWarnings("SystemConsoleNull")
    private static boolean onTerminal() {
        return System.console() != null;
    }
}
