package io.outbox4j.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class QuickstartTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return Quickstart.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void embeddedDefaults_deliverEveryEventInOrder() {
        int status = run("--messages", "2000", "--writers", "3", "--keys", "50");
        System.out.println(out()); // the summary, for the CI log

        assertThat(status).as("exit status; stdout:%n%s%nstderr:%n%s", out(), err()).isZero();
        assertThat(out())
                .contains("orders committed      2000")
                .contains("events written        2000")
                .contains("events read back      2000")
                .contains("missing               0")
                .contains("order violations      0")
                .contains("paced at --rate " + Options.DEFAULT_RATE)
                .contains("relay throughput")
                .contains("from each order's commit to the broker's ack of its event")
                .contains("result                OK");
    }

    @Test
    void rate_isAWholeNumberOrMax() {
        assertThat(Options.parse("--rate", "max").rate).as("max: unpaced").isZero();
        assertThat(Options.parse("--rate=750").rate).isEqualTo(750);
        assertThat(Options.parse().rate).isEqualTo(Options.DEFAULT_RATE);
        assertThat(run("--rate", "fast")).isEqualTo(2);
        assertThat(err()).contains("error: --rate must be a whole number, but was 'fast' (or max)");
    }

    @Test
    void unreachableKafka_failsWithinTimeout_namingTheBroker() {
        String nowhere = "127.0.0.1:" + io.outbox4j.testservices.ServerSupport.freePort();
        long t0 = System.nanoTime();
        int status = run("--publisher", "kafka://" + nowhere, "--timeout", "3", "--messages", "10");
        long tookMs = (System.nanoTime() - t0) / 1_000_000;
        assertThat(status).as("exit status; stderr:%n%s", err()).isEqualTo(1);
        assertThat(err())
                .contains("could not create Kafka topic")
                .contains("at " + nowhere + ": no broker answered within 3s");
        assertThat(tookMs).as("bounded by --timeout 3 (plus start-up)").isLessThan(15_000);
    }

    @Test
    void help_listsTheOptions() {
        assertThat(run("--help")).isZero();
        assertThat(out())
                .contains(
                        "--messages N", "--store URL", "--publisher URI", "--relays N", "--rate N");
    }

    @Test
    void badOption_isExplainedWithUsage_andExitsTwo() {
        assertThat(run("--messages", "lots")).isEqualTo(2);
        assertThat(err())
                .contains("error: --messages must be a whole number, but was 'lots'")
                .contains("Usage:");
    }

    @Test
    void unknownPublisherScheme_isRejected() {
        assertThat(run("--publisher", "mqtt://localhost:1883")).isEqualTo(2);
        assertThat(err())
                .contains("--publisher must start with kafka://, amqp://, amqps:// or sqs://");
    }
}
