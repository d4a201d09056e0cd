package io.outbox4j.faulttests;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox4j.api.Observation;
import io.outbox4j.api.Observer;
import io.outbox4j.testservices.DatabaseServer;
import io.outbox4j.testservices.ElasticMqNode;
import io.outbox4j.testservices.MariaDbServer;
import io.outbox4j.testservices.PostgresServer;
import io.outbox4j.testservices.RabbitMqServer;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: every server the relay depends on is restarted while one relay works through a keyed
 * backlog, counted by a real consumer. The outbox database is killed (PostgreSQL: an immediate
 * shutdown, MariaDB: SIGKILL of mariadbd) and started again on the same data; the RabbitMQ
 * application is stopped and started ({@code rabbitmqctl stop_app / start_app}: every connection is
 * closed, durable queues and persistent messages kept); a private ElasticMQ is stopped and started
 * on the same port. (Kafka: {@link BrokerOutageTest}.) Each drill: nothing lost, each key first
 * published in enqueue order, no dead letters, the outbox empty; the recovery time goes to {@code
 * target/fault-figures.json}.
 */
class ServerRestartTest {
    private static final Duration DOWN = Duration.ofSeconds(4);

    /** Stops a server and starts it again. */
    private interface Outage {
        void stop() throws Exception;

        void start() throws Exception;
    }

    @Test
    void postgresqlKilledAndRestartedMidRun_losesNothing_andKeepsEveryKeysOrder() throws Exception {
        databaseKilled("postgresql_restart", PostgresServer.shared());
    }

    @Test
    void mariadbKilledAndRestartedMidRun_losesNothing_andKeepsEveryKeysOrder() throws Exception {
        databaseKilled("mariadb_restart", MariaDbServer.shared());
    }

    @Test
    void rabbitmqRestartedMidRun_thePublisherReconnectsByItself_andNothingIsLost()
            throws Exception {
        RabbitMqServer rabbit = RabbitMqServer.shared();
        try (Drill d =
                new Drill(
                                "rabbitmq_restart",
                                2000,
                                50,
                                RelaySettings.drill(),
                                PostgresServer.shared(),
                                RabbitSink::open)
                        .enqueueLoad()) {
            drill(
                    d,
                    "broker-restarted",
                    new Outage() {
                        @Override
                        public void stop() {
                            rabbit.rabbitmqctl("stop_app");
                        }

                        @Override
                        public void start() {
                            rabbit.rabbitmqctl("start_app");
                            rabbit.rabbitmqctl("await_startup");
                        }
                    });
        } finally {
            rabbit.rabbitmqctl("start_app");
        }
    }

    @Test
    void elasticmqRestartedMidRun_theRelayRetriesUntilItIsBack_andTheOutboxLosesNothing()
            throws Exception {
        try (ElasticMqNode node = ElasticMqNode.start();
                Drill d =
                        new Drill(
                                        "elasticmq_restart",
                                        2000,
                                        50,
                                        RelaySettings.drill(),
                                        PostgresServer.shared(),
                                        SqsSink.on(node))
                                .enqueueLoad()) {
            SqsSink sink = (SqsSink) d.sink();
            long[] stoppedAt = {0};
            long[] startedAgainAt = {0};
            Map<String, Object> f =
                    run(
                            d,
                            "broker-restarted",
                            new Outage() {
                                @Override
                                public void stop() {
                                    node.stop();
                                    stoppedAt[0] = System.currentTimeMillis();
                                }

                                @Override
                                public void start() {
                                    startedAgainAt[0] = System.currentTimeMillis();
                                    node.startAgain();
                                    sink.recreateQueue();
                                }
                            });
            // The in-memory ElasticMQ loses the messages it held when it stops: those the relay
            // had published (SQS accepted them, the outbox completed them) and the consumer had
            // not read yet. The outbox's part is that every other message reached the new queue.
            // The cut is the restart, not the end of stop(): a call in flight when the server
            // stopped can see its acceptance after stop() returned (CI saw a batch of 30 so).
            awaitSettled(d, Duration.ofMinutes(2));
            List<Integer> lostWithTheQueue = sink.unreadAcceptedBy(startedAgainAt[0]);
            f.put("lostWithElasticMqsMemory", lostWithTheQueue.size());
            f.put(
                    "ofWhichAcceptedAfterStopReturned",
                    lostWithTheQueue.size() - sink.unreadAcceptedBy(stoppedAt[0]).size());
            f.put("consumerCallsFailed", sink.failedCalls());
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put(
                    "lostMeans",
                    "messages never read; of those, lostWithElasticMqsMemory were accepted by the"
                            + " in-memory ElasticMQ before it was started again (the broker's loss,"
                            + " not the outbox's)");
            d.report(extra);
            assertThat(d.ledger.missing(Integer.MAX_VALUE))
                    .as(
                            "messages never read that SQS had not accepted before the restart"
                                    + " (the outbox's loss)")
                    .containsExactlyInAnyOrderElementsOf(lostWithTheQueue);
            assertThat(d.ledger.keysOutOfOrder()).as("keys first read out of order").isZero();
            assertThat(d.db.deadLetters())
                    .as("dead letters %s", d.db.deadLetterReasons(5))
                    .isZero();
            assertThat(d.db.unfinished()).as("messages left in the outbox").isZero();
        }
    }

    /** The outbox database is killed mid-run and started again; publishing goes to Kafka. */
    private static void databaseKilled(String scenario, DatabaseServer server) throws Exception {
        Outage outage =
                new Outage() {
                    @Override
                    public void stop() {
                        server.kill();
                    }

                    @Override
                    public void start() {
                        server.startAgain();
                    }
                };
        try (Drill d =
                new Drill(scenario, 3000, 50, RelaySettings.drill(), server, KafkaSink::open)
                        .enqueueLoad()) {
            drill(d, "database-killed", outage);
        } finally {
            if (server.restartable()) {
                server.startAgain(); // a no-op when it runs
            }
        }
    }

    /** The drill: one relay, the outage mid-run, then the figures and the verdict. */
    private static void drill(Drill d, String kind, Outage outage) throws Exception {
        run(d, kind, outage);
        boolean drained = d.awaitDrained(Duration.ofMinutes(3));
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("drainedInTime", drained);
        d.report(extra);
        d.verify();
    }

    /** Starts the relay, stops the server mid-run for {@link #DOWN}, starts it again. */
    private static Map<String, Object> run(Drill d, String kind, Outage outage) throws Exception {
        AtomicInteger failed = new AtomicInteger();
        Observer countFailures =
                o -> {
                    if (o.outcome() != Observation.Outcome.COMPLETED) {
                        failed.incrementAndGet();
                    }
                };
        Drill.LocalRelay relay = d.localRelay("relay-1", countFailures);
        relay.relay().start();
        Drill.awaitPublished(d, d.load.messages() / 5, Duration.ofSeconds(60));
        int seenAtStop = d.ledger.distinct();
        long stopAt = System.currentTimeMillis();
        outage.stop();
        long stoppedAt = System.currentTimeMillis();
        Set<String> leased = new HashSet<>();
        int failedBefore = failed.get();
        while (System.currentTimeMillis() < stopAt + DOWN.toMillis()) {
            leased.addAll(relay.journal().snapshot().leasedIds());
            Thread.sleep(10);
        }
        long startAt = System.currentTimeMillis();
        outage.start();
        long backAt = System.currentTimeMillis();
        Map<String, Object> f = d.fault(kind, relay.name(), startAt, leased, by -> true);
        f.put("stopMillis", stoppedAt - stopAt);
        f.put("downMillis", startAt - stopAt);
        f.put("startMillis", backAt - startAt);
        f.put("failedDeliveriesWhileDown", failed.get() - failedBefore);
        f.put("relayStateAfterStart", relay.relay().state().toString());
        Drill.require(
                seenAtStop < d.load.messages(),
                "the server was stopped mid-run (" + seenAtStop + " messages seen before)");
        return f;
    }

    /** Waits until the outbox is empty and the consumer has read nothing new for 2 seconds. */
    private static void awaitSettled(Drill d, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long last = -1;
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            long records = d.ledger.records();
            if (records != last) {
                last = records;
                quietSince = System.nanoTime();
            } else if (d.db.unfinished() == 0
                    && System.nanoTime() - quietSince > Duration.ofSeconds(2).toNanos()) {
                return;
            }
            Thread.sleep(50);
        }
    }
}
