package io.outbox4j.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * One namastack-outbox instance in a JVM of its own, for the {@code scale} scenario: a pool of its
 * own ({@value #POOL_SIZE} connections: its 16 processing threads, scheduler and heartbeat) on
 * {@code BENCH_DB_URL} ({@code BENCH_DB_USER}, {@code BENCH_DB_PASSWORD}), {@link Namastack} with
 * its handler sending to {@code BENCH_KAFKA_TOPIC} on {@code BENCH_KAFKA_BOOTSTRAP}, its scheduler
 * running (partitioning on: the instances share namastack's 256 partitions). Prints {@value #READY}
 * once started; runs until SIGTERM.
 */
public final class NamastackMain {
    /** The line printed once the instance runs. */
    static final String READY = "namastack instance ready";

    /** Connections of the instance's pool. */
    static final int POOL_SIZE = 20;

    private NamastackMain() {}

    /**
     * Runs one instance until SIGTERM.
     *
     * @param args none
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(System.getenv("BENCH_DB_URL"));
        config.setUsername(System.getenv("BENCH_DB_USER"));
        config.setPassword(System.getenv("BENCH_DB_PASSWORD"));
        config.setMaximumPoolSize(POOL_SIZE);
        config.setPoolName("namastack-instance");
        HikariDataSource pool = new HikariDataSource(config);
        Map<String, Object> client = new HashMap<>();
        client.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, System.getenv("BENCH_KAFKA_BOOTSTRAP"));
        Namastack namastack =
                new Namastack(
                        pool,
                        Gruelbox.producerProperties(client),
                        System.getenv("BENCH_KAFKA_TOPIC"));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        namastack.close();
                                    } finally {
                                        pool.close();
                                        stopped.countDown();
                                    }
                                }));
        namastack.startProcessing();
        System.out.println(READY);
        System.out.flush();
        stopped.await();
    }
}
